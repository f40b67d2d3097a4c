// The event log and its pull door: events written with each change, numbered per user with no gap, read after a
// cursor with limit/types/has_more, a long poll woken by a commit, 410 for a cursor retention passed, and the sweep.
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { acceptedOutbound, deliver, envelope, networkSeconds, statusItem, textItem } from './fixtures/webhooks';

const SECRET = 'events-secret';
const PHONE = '900000000000011';
const NOW = Date.UTC(2026, 10, 20, 12);
const DAY = 86_400_000;

async function start(t: tap.Test, overrides: Record<string, unknown> = {}) {
  const clock = { now: NOW };
  const built = await buildTestApp(t, { messagingAppSecret: SECRET, ...overrides }, { now: () => new Date(clock.now) });
  const owner = await createUser(built.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  return { ...built, clock, owner };
}
const inbound = (wamid: string, body: string, at = NOW) => envelope(PHONE, {
  contacts: [{ wa_id: '15551230001', profile: { name: 'Ana' } }], messages: [textItem(wamid, '15551230001', networkSeconds(at), body)],
});
const pull = (app: App, user: { id: number }, auth: Record<string, string>, query = '') =>
  app.inject({ method: 'GET', url: `/api/user/${user.id}/events${query}`, headers: auth });

t.test('each change writes one event in its transaction: received, sent, status moves under the rank rule, numbered 1, 2, 3 …', async (t) => {
  const { app, owner } = await start(t);
  t.equal((await deliver(app, inbound('wamid.in1', 'Hello'), SECRET)).statusCode, 200);
  await deliver(app, inbound('wamid.in1', 'Hello'), SECRET); // a redelivery changes nothing
  const out = acceptedOutbound(app, owner.id, 'wamid.out1', '15551230001', NOW);
  await deliver(app, envelope(PHONE, { statuses: [statusItem('wamid.out1', 'delivered', NOW / 1000 + 5)] }), SECRET);
  // A late `sent` does not move the status: no event.
  await deliver(app, envelope(PHONE, { statuses: [statusItem('wamid.out1', 'sent', NOW / 1000 + 1)] }), SECRET);

  const res = await pull(app, owner, bearer(app, owner));
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(body.events.map((e: { id: number; type: string; data: { status?: string } }) => [e.id, e.type, e.data.status]), [
    [1, 'message.received', undefined], [2, 'message.sent', undefined], [3, 'message.status', 'accepted'], [4, 'message.status', 'delivered'],
  ]);
  t.equal(body.next_after, 4);
  t.equal(body.has_more, false);
  const first = body.events[0];
  t.same(first.created_at, new Date(NOW).toISOString());
  t.same(first.data.contact, { id: 1, wa_id: '15551230001', user_id: null, username: null, name: 'Ana' }, 'the contact object of the listing');
  t.match(first.data.message, { wamid: 'wamid.in1', direction: 'inbound', text: 'Hello', status: 'received' });
  // The message as it stands when read: the `sent` event shows today's status.
  t.match(body.events[1].data.message, { id: out.id, status: 'delivered' });
  t.same(app.db.$client.prepare('SELECT seq FROM events ORDER BY id').pluck().all(), [1, 2, 3, 4]);
});

t.test('pull pages with after, limit and types; another CLIENT gets 403, an unknown user 404, bad input 400', async (t) => {
  const { app, owner } = await start(t);
  for (let i = 1; i <= 5; i += 1) await deliver(app, inbound(`wamid.p${i}`, `m${i}`), SECRET);
  acceptedOutbound(app, owner.id, 'wamid.o', '15551230001', NOW);
  const auth = bearer(app, owner);
  const page = (await pull(app, owner, auth, '?after=1&limit=2')).json();
  t.same(page.events.map((e: { id: number }) => e.id), [2, 3]);
  t.same([page.next_after, page.has_more], [3, true]);
  const sent = (await pull(app, owner, auth, '?types=message.sent,message.status')).json();
  t.same(sent.events.map((e: { id: number; type: string }) => [e.id, e.type]), [[6, 'message.sent'], [7, 'message.status']]);
  const past = (await pull(app, owner, auth, '?after=99')).json();
  t.same(past, { events: [], next_after: 99, has_more: false });

  const other = await createUser(app, { email: 'other@example.com' });
  t.equal((await pull(app, owner, bearer(app, other))).statusCode, 403);
  const admin = await createAdmin(app);
  t.equal((await pull(app, owner, bearer(app, admin))).json().events.length, 7, 'an ADMIN reads any user');
  t.equal((await pull(app, { id: 999 }, bearer(app, admin))).statusCode, 404);
  for (const query of ['?limit=0', '?limit=1001', '?types=message.nope', '?wait=61', '?after=-1', '?extra=1']) {
    const bad = await pull(app, owner, auth, query);
    t.equal(bad.statusCode, 400, query);
    t.equal(bad.json().code, 'VALIDATION_ERROR', query);
  }
});

t.test('a long poll answers when an event commits (woken after the commit), not before', async (t) => {
  const { app, owner } = await start(t);
  const auth = bearer(app, owner);
  let answered = false;
  const waiting = pull(app, owner, auth, '?wait=60').then((res) => {
    answered = true;
    return res;
  });
  // Let the request reach its wait.
  while (app.eventNotifier.size() === 0) await new Promise((resolve) => setImmediate(resolve));
  t.equal(answered, false, 'no event yet: still waiting');
  t.equal((await deliver(app, inbound('wamid.w1', 'wake up'), SECRET)).statusCode, 200);
  const res = await waiting;
  t.equal(res.statusCode, 200);
  t.same(res.json().events.map((e: { id: number }) => e.id), [1]);
  t.equal(app.eventNotifier.size(), 0, 'the waiter left');
});

t.test('events older than RETENTION_EVENTS_DAYS are swept; an `after` before what is kept gets 410 with oldest_available', async (t) => {
  const { app, owner, clock } = await start(t, { retentionEventsDays: 7 });
  await deliver(app, inbound('wamid.r1', 'old'), SECRET);
  await deliver(app, inbound('wamid.r2', 'old too'), SECRET);
  clock.now = NOW + 6 * DAY;
  await deliver(app, inbound('wamid.r3', 'new', clock.now), SECRET);
  clock.now = NOW + 7 * DAY + 1000;
  t.match(await app.retentionSweep.run(), { events: 2 });
  const auth = bearer(app, owner);
  const expired = await pull(app, owner, auth, '?after=0');
  t.equal(expired.statusCode, 410);
  t.same(expired.json(), {
    statusCode: 410, code: 'EVENTS_CURSOR_EXPIRED', error: 'Gone',
    message: 'Events after 0 are no longer kept; re-read the conversations, then continue after 2', oldest_available: 3,
  });
  t.same((await pull(app, owner, auth, '?after=2')).json().events.map((e: { id: number }) => e.id), [3]);
  // Numbers never restart: the next event is 4.
  await deliver(app, inbound('wamid.r4', 'next', clock.now), SECRET);
  t.same((await pull(app, owner, auth, '?after=3')).json().events.map((e: { id: number }) => e.id), [4]);
});

t.test('the sweep deletes aged events oldest id first, a batch at a time, and never one not aged yet (a clock that went back)', async (t) => {
  const { app, owner } = await start(t);
  const insert = app.db.$client.prepare('INSERT INTO events (user_id, seq, type, created_at) VALUES (?, ?, ?, ?)');
  // Seq 3 was written while the clock was ahead: it is not aged at the cut, the events around it are.
  [NOW - 10 * DAY, NOW - 9 * DAY, NOW + DAY, NOW - 8 * DAY, NOW - 8 * DAY].forEach((at, i) => insert.run(owner.id, i + 1, 'message.received', at));
  const left = () => app.db.$client.prepare('SELECT seq FROM events ORDER BY id').pluck().all();
  const cut = NOW - 7 * DAY;
  t.equal(app.eventsRepo.deleteBefore(cut, 2), 2, 'a full batch: the two oldest');
  t.same(left(), [3, 4, 5]);
  t.equal(app.eventsRepo.deleteBefore(cut, 2), 1, 'the next batch looks at the next two ids only and keeps the one not aged');
  t.same(left(), [3, 5]);
  t.equal(app.eventsRepo.deleteBefore(cut, 2), 1);
  t.same(left(), [3]);
  t.equal(app.eventsRepo.deleteBefore(cut, 2), 0, 'nothing aged is left');
  t.equal(app.eventsRepo.deleteBefore(NOW + 2 * DAY, 2), 1, 'it goes once it has aged too');
});

t.test('the OpenAPI document names the Event component, with the event types as an enum', async (t) => {
  const { app } = await start(t);
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
  const event = doc.components.schemas.Event;
  t.same(event.properties.type.enum, ['message.received', 'message.sent', 'message.status', 'message.media', 'message.edited', 'contact.updated']);
  t.same(event.required, ['id', 'type', 'created_at', 'data']);
  t.same(doc.paths['/api/user/{id}/events'].get.responses['200'].content['application/json'].schema.properties.events.items,
    { $ref: '#/components/schemas/Event' });
});

t.test('a send refused or interrupted records a failure event; an archived or refused inbound file writes message.media', async (t) => {
  const { app, owner } = await start(t);
  const refused = app.messagesRepo.insertOutbound({ userId: owner.id, to: '15551230001', type: 'text', text: 'Hi', payloadJson: '{}', createdAt: NOW });
  await app.writer.write(() => app.messagesRepo.markFailed(refused, '{"code":131047,"title":"Re-engagement message","details":null}', NOW));
  const cut = app.messagesRepo.insertOutbound({ userId: owner.id, to: '15551230001', type: 'text', text: 'Hi', payloadJson: '{}', createdAt: NOW });
  await app.writer.write(() => app.messagesRepo.markInterrupted(cut, '{"code":"INTERRUPTED","title":null,"details":null}', NOW));
  await app.writer.write(() => app.messagesRepo.markInterrupted(cut, '{"code":"INTERRUPTED","title":null,"details":null}', NOW)); // no longer pending: nothing
  const image = envelope(PHONE, { messages: [{ from: '15551230001', id: 'wamid.img', timestamp: String(NOW / 1000), type: 'image',
    image: { id: 'media-1', mime_type: 'image/png', sha256: 'x' } }] });
  await deliver(app, image, SECRET);
  const imageId = app.db.$client.prepare("SELECT id FROM messages WHERE wamid = 'wamid.img'").pluck().get() as number;
  await app.writer.write(() => app.mediaRepo.failed(imageId, 'too_large', NOW));
  const events = (await pull(app, owner, bearer(app, owner))).json().events as { id: number; type: string; data: { status?: string; message: { id: number; media?: { error: string } } } }[];
  t.same(events.map((e) => [e.id, e.type, e.data.status, e.data.message.id]), [
    [1, 'message.sent', undefined, refused], [2, 'message.status', 'failed', refused],
    [3, 'message.sent', undefined, cut], [4, 'message.status', 'failed', cut],
    [5, 'message.received', undefined, imageId], [6, 'message.media', undefined, imageId],
  ]);
  t.equal(events[5]!.data.message.media!.error, 'too_large');
});
