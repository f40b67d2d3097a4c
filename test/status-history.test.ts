// Every callback status joins the message's history: ones outside the rank (played, deleted …) without moving the current status.
import t from 'tap';
import type { App } from '../src/app';
import { STORED_MESSAGE, type StoredMessage } from '../src/db/listed-messages';
import { listedMessageJson } from '../src/views/message-json';
import { buildTestApp, createUser } from './helper';
import { acceptedOutbound, deliver, envelope, historyOf, inboxRows, statusItem } from './fixtures/webhooks';

const PHONE = '900000000000077';
const SECRET = 'history-secret';
const T0 = 1767225600;

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const { app } = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  return { app, user };
}
const statuses = async (t: { equal(a: unknown, b: unknown): void }, app: App, wamid: string, items: [string, number][]) => {
  const res = await deliver(app, envelope(PHONE, { statuses: items.map(([s, at]) => statusItem(wamid, s, T0 + at)) }), SECRET);
  t.equal(res.statusCode, 200);
};
/** The listed JSON as stored, and as rendering the row and its history afresh gives it. */
function listed(app: App, id: number): { stored: Record<string, unknown>; fresh: string; raw: string } {
  const row = app.db.$client.prepare(`SELECT m.listed_json AS listed, ${STORED_MESSAGE} AS stored FROM messages m WHERE m.id = ?`)
    .get(id) as { listed: string; stored: string };
  return { stored: JSON.parse(row.listed), raw: row.listed, fresh: listedMessageJson(JSON.parse(row.stored) as StoredMessage) };
}

t.test('played and deleted join the history in the network time; the current status stays where the rank put it', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.hist.1');
  await statuses(t, app, 'wamid.hist.1', [['sent', 1], ['delivered', 2], ['played', 5]]);
  await statuses(t, app, 'wamid.hist.1', [['deleted', 9], ['played', 5]]);
  const row = app.messagesRepo.findById(out.id)!;
  t.equal(row.status, 'delivered', 'played and deleted do not move it');
  t.equal(row.statusUpdatedAt, (T0 + 2) * 1000);
  t.same(historyOf(app, out.id), [['sent', (T0 + 1) * 1000, null], ['delivered', (T0 + 2) * 1000, null],
    ['played', (T0 + 5) * 1000, null], ['deleted', (T0 + 9) * 1000, null]], 'each once, a redelivery adds nothing');
  t.same(inboxRows(app).map((e) => [e.state, e.error]), [['processed', null], ['processed', null]], 'no "not tracked" notes');

  const { stored, raw, fresh } = listed(app, out.id);
  t.equal(raw, fresh, 'the stored listed JSON was refreshed by the unranked entry');
  t.same((stored.statuses as { status: string }[]).map((s) => s.status), ['sent', 'delivered', 'played', 'deleted']);
  t.equal(stored.status, 'delivered');

  await statuses(t, app, 'wamid.hist.1', [['read', 12]]);
  t.equal(app.messagesRepo.findById(out.id)!.status, 'read', 'a ranked status still moves it afterwards');
});

t.test('an unranked status that races the send answer is kept and joins the history when the wamid is stored', async (t) => {
  const { app, user } = await setup(t);
  await statuses(t, app, 'wamid.hist.race', [['played', 3]]);
  t.equal(app.messagesRepo.orphanCount(), 1);
  const out = acceptedOutbound(app, user.id, 'wamid.hist.race');
  t.equal(app.messagesRepo.findById(out.id)!.status, 'accepted');
  t.same(historyOf(app, out.id), [['played', (T0 + 3) * 1000, null]]);
  t.equal(app.messagesRepo.orphanCount(), 0);
  const { raw, fresh } = listed(app, out.id);
  t.equal(raw, fresh);
});

t.test('a status item without a usable status is refused with a note, the others are applied', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.hist.bad');
  const items = [statusItem('wamid.hist.bad', '', T0 + 1), statusItem('wamid.hist.bad', 'x'.repeat(65), T0 + 2), statusItem('wamid.hist.bad', 'sent', T0 + 3)];
  t.equal((await deliver(app, envelope(PHONE, { statuses: items }), SECRET)).statusCode, 200);
  t.same(historyOf(app, out.id), [['sent', (T0 + 3) * 1000, null]]);
  t.match(inboxRows(app)[0]!.error, /statuses\[0\]\.status: Expected string length greater or equal to 1\n.*statuses\[1\]\.status: Expected string length less or equal to 64/);
});

t.test('callbacks out of order land in the history by the network time, ties in arrival order; the listed JSON follows', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.hist.order');
  await statuses(t, app, 'wamid.hist.order', [['read', 7]]);
  await statuses(t, app, 'wamid.hist.order', [['sent', 1], ['played', 7]]);
  await statuses(t, app, 'wamid.hist.order', [['delivered', 4], ['sent', 1]]);
  t.same(historyOf(app, out.id).map(([status, at]) => [status, at]), [['sent', (T0 + 1) * 1000], ['delivered', (T0 + 4) * 1000],
    ['read', (T0 + 7) * 1000], ['played', (T0 + 7) * 1000]], 'sorted by time; read came before played at the same second');
  t.equal(app.messagesRepo.findById(out.id)!.status, 'read');
  const { raw, fresh, stored } = listed(app, out.id);
  t.equal(raw, fresh, 'patched as a fresh render shows it');
  t.same((stored.statuses as { status: string }[]).map((s) => s.status), ['sent', 'delivered', 'read', 'played']);
});

t.test('a history the gateway cannot read is started again by the next callback rather than failing it', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.hist.bad');
  app.db.$client.prepare("UPDATE messages SET statuses_json = 'not json' WHERE id = ?").run(out.id);
  t.same(JSON.parse(listed(app, out.id).fresh).statuses, [], 'rendered afresh it shows an empty history');
  await statuses(t, app, 'wamid.hist.bad', [['delivered', 2]]);
  t.same(historyOf(app, out.id), [['delivered', (T0 + 2) * 1000, null]]);
  t.same(inboxRows(app).map((e) => e.state), ['processed']);
});
