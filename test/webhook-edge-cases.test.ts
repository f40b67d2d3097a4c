// Our own payloads: duplicates, shuffled statuses, several messages, bad items, unknown numbers, limits, concurrency.
import t from 'tap';
import { buildTestApp, createUser } from './helper';
import type { App } from '../src/app';
import { signBody } from '../src/webhooks/signature';
import {
  acceptedOutbound, deliver as deliverSigned, envelope, fixtureText, historyOf, inboxRows, messageByWamid, messageCount, statusItem, textItem, WEBHOOK_URL,
} from './fixtures/webhooks';

const PHONE = '900000000000001';
const SECRET = 'edge-secret';
const deliver = (app: App, body: string) => deliverSigned(app, body, SECRET);
const CONTACT = '15551234567';
const edge = (name: string) => fixtureText(name, 'webhooks-edge');
const statusCallback = (wamid: string, status: string, seconds: number, errors?: Record<string, unknown>[]) =>
  envelope(PHONE, { statuses: [statusItem(wamid, status, seconds, errors)] });
const ERROR_470 = { code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Receiver is incapable of receiving this message' } };
const STORED_470 = { code: 131026, title: 'Message undeliverable', details: 'Receiver is incapable of receiving this message' };

async function setup(t: Parameters<typeof buildTestApp>[0], overrides: Parameters<typeof buildTestApp>[1] = {}) {
  const test = await buildTestApp(t, { messagingAppSecret: SECRET, ...overrides });
  const user = await createUser(test.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  return { ...test, user };
}

async function deliverAll(t: tap.Test, app: Awaited<ReturnType<typeof setup>>['app'], bodies: string[]) {
  for (const body of bodies) t.equal((await deliver(app, body)).statusCode, 200);
}

t.test('a redelivered inbound message and a redelivered status change nothing', async (t) => {
  const { app, user } = await setup(t);
  const inbound = envelope(PHONE, { contacts: [{ wa_id: CONTACT, profile: { name: 'Ana' } }], messages: [textItem('wamid.in.1', CONTACT, 1767225600, 'hi')] });
  const outbound = acceptedOutbound(app, user.id, 'wamid.out.1', CONTACT);
  const sent = statusCallback('wamid.out.1', 'sent', 1767225601);
  await deliverAll(t, app, [inbound, sent, inbound, sent, inbound]);

  t.equal(inboxRows(app).length, 5, 'every delivery is journaled');
  t.ok(inboxRows(app).every((e) => e.state === 'processed' && e.error === null));
  t.equal(messageCount(app), 2);
  const row = messageByWamid(app, 'wamid.in.1')!;
  t.match(app.messagesRepo.conversationOf(row.id), { contactName: 'Ana', lastInboundAt: 1767225600000 });
  t.same(historyOf(app, outbound.id), [['sent', 1767225601000, null]]);
});

t.test('statuses in any order: the highest rank wins, the history keeps them all in network time', async (t) => {
  const { app, user } = await setup(t);
  const cases: { name: string; deliveries: [string, number, boolean?][]; status: string; error: object | null }[] = [
    { name: 'read before sent and delivered', deliveries: [['read', 30], ['sent', 10], ['delivered', 20]], status: 'read', error: null },
    { name: 'sent after failed', deliveries: [['failed', 20, true], ['sent', 10]], status: 'failed', error: STORED_470 },
    { name: 'delivered after failed wins', deliveries: [['failed', 10, true], ['delivered', 20]], status: 'delivered', error: null },
    { name: 'failed after read changes nothing but the history', deliveries: [['read', 10], ['failed', 20, true]], status: 'read', error: null },
  ];
  for (const [i, c] of cases.entries()) {
    const wamid = `wamid.order.${i}`;
    const message = acceptedOutbound(app, user.id, wamid, CONTACT);
    await deliverAll(t, app, c.deliveries.map(([status, s, failed]) => statusCallback(wamid, status, 1767225600 + s, failed ? [ERROR_470] : undefined)));
    const row = app.messagesRepo.findById(message.id)!;
    t.equal(row.status, c.status, c.name);
    t.same(row.errorJson && JSON.parse(row.errorJson), c.error, `${c.name}: current error`);
    const expected = [...c.deliveries].sort((a, b) => a[1] - b[1]).map(([status, s, failed]) => [status, (1767225600 + s) * 1000, failed ? STORED_470 : null]);
    t.same(historyOf(app, message.id), expected, `${c.name}: history`);
  }
});

t.test('statuses that raced the send are kept, then applied when the send stores the wamid', async (t) => {
  const { app, user } = await setup(t);
  await deliverAll(t, app, [statusCallback('wamid.race', 'delivered', 1767225620), statusCallback('wamid.race', 'sent', 1767225610), statusCallback('wamid.race', 'read', 1767225630)]);
  t.equal(app.messagesRepo.orphanCount(), 3);
  const message = acceptedOutbound(app, user.id, 'wamid.race', CONTACT);
  t.equal(message.status, 'read');
  t.same(historyOf(app, message.id).map((h) => h[0]), ['sent', 'delivered', 'read']);
  t.equal(app.messagesRepo.orphanCount(), 0);
});

t.test('wamids are per user: a callback routed to another user never touches this one\'s message', async (t) => {
  const { app, user: ana } = await setup(t);
  const bobPhone = '900000000000009';
  const bob = await createUser(app, { email: 'bob@example.com', messagingPhoneNumberId: bobPhone });
  const anas = acceptedOutbound(app, ana.id, 'wamid.shared', CONTACT);
  await deliverAll(t, app, [envelope(bobPhone, { statuses: [statusItem('wamid.shared', 'failed', 1767225601, [ERROR_470])] })]);

  t.match(app.messagesRepo.findById(anas.id), { status: 'accepted', errorJson: null }, "ana's message keeps its status");
  t.same(historyOf(app, anas.id), [], 'and gets no history entry');
  const orphans = () => app.db.$client.prepare('SELECT user_id AS userId, wamid, status FROM orphan_statuses').all();
  t.same(orphans(), [{ userId: bob.id, wamid: 'wamid.shared', status: 'failed' }], "it is kept as bob's orphan");

  const bobs = acceptedOutbound(app, bob.id, 'wamid.shared', CONTACT);
  t.equal(bobs.status, 'failed', "applied when bob's send stores the wamid");
  t.same(historyOf(app, bobs.id), [['failed', 1767225601000, STORED_470]]);
  t.same(historyOf(app, anas.id), []);
  t.same(orphans(), []);

  const inbound = (phone: string) => envelope(phone, { messages: [textItem('wamid.in.shared', CONTACT, 1767225602, `to ${phone}`)] });
  await deliverAll(t, app, [inbound(PHONE), inbound(bobPhone), inbound(bobPhone)]);
  t.equal(messageCount(app), 4, 'the same inbound wamid is stored once for each user');
  t.match(messageByWamid(app, 'wamid.in.shared', ana.id), { direction: 'inbound', text: `to ${PHONE}` });
  t.match(messageByWamid(app, 'wamid.in.shared', bob.id), { direction: 'inbound', text: `to ${bobPhone}` });
});

t.test('several entries, changes and messages in one payload: each routed and stored', async (t) => {
  const { app, user } = await setup(t);
  const outbound = acceptedOutbound(app, user.id, 'wamid.edge.OUT1', '15551230001');
  await deliverAll(t, app, [edge('several_messages_two_entries')]);
  const stored = ['wamid.edge.A1', 'wamid.edge.B1', 'wamid.edge.A2', 'wamid.edge.A3'].map((w) => messageByWamid(app, w)!);
  t.same(stored.map((m) => [m.type, m.text, m.userId]), [['text', 'Olá', user.id], ['sticker', null, user.id], ['audio', null, user.id], ['future_type', 'something new', user.id]]);
  t.same(JSON.parse(stored[1]!.mediaJson!), { id: '5550001', mime_type: 'image/webp', sha256: 'c3RpY2tlcg==', filename: null });
  t.same(JSON.parse(stored[2]!.mediaJson!), { id: '5550002', mime_type: 'audio/ogg; codecs=opus', sha256: 'YXVkaW8=', filename: null });
  t.match(app.messagesRepo.conversationOf(stored[0]!.id), { contactWaId: '15551230001', contactName: 'Ana', lastInboundAt: 1767225605000 });
  t.match(app.messagesRepo.conversationOf(stored[1]!.id), { contactWaId: '15551230002', contactName: 'Bruno' });
  t.equal(app.messagesRepo.findById(outbound.id)!.status, 'delivered');
  t.equal(messageByWamid(app, 'wamid.edge.C1'), undefined, 'the second number has no user');
  t.match(inboxRows(app), [{ state: 'processed', error: 'entry[0].changes[1]: no user has phone_number_id 900000000000002; stored only' }]);
});

t.test('bad items are recorded with their error; the good ones around them are stored', async (t) => {
  const { app, user } = await setup(t);
  const outbound = acceptedOutbound(app, user.id, 'wamid.bad.OUT', '15551230001');
  await deliverAll(t, app, [edge('bad_items_in_batch')]);
  t.same(['wamid.bad.1', 'wamid.bad.3', 'wamid.bad.5'].map((w) => messageByWamid(app, w)?.text), ['first, fine', undefined, 'last, fine']);
  t.equal(messageCount(app), 3);
  t.equal(app.messagesRepo.findById(outbound.id)!.status, 'delivered');
  t.same(historyOf(app, outbound.id), [['deleted', 1767225605000, null], ['delivered', 1767225606000, null]], 'the unranked status joins the history');
  t.match(inboxRows(app), [{ state: 'processed' }]);
  t.equal(inboxRows(app)[0]!.error, [
    'entry[0].changes[0].messages[1].id: Expected required property',
    "entry[0].changes[0].messages[2].timestamp: Expected string to match '^[0-9]{1,16}$'",
    'entry[0].changes[0].messages[3]: Expected object',
    'entry[0].changes[1].value.metadata: Expected required property',
    'entry[0].changes[2]: Expected object',
    'entry[1].changes: Expected required property',
  ].join('\n'));
});

t.test('an unknown phone number id and other fields are stored and acknowledged, nothing else', async (t) => {
  const { app } = await setup(t);
  await deliverAll(t, app, [edge('unknown_phone_number_id'), edge('other_field_account_update'), '{}']);
  t.same(inboxRows(app).map((e) => [e.rawBody, e.state, e.error]), [
    [edge('unknown_phone_number_id'), 'processed', 'entry[0].changes[0]: no user has phone_number_id 999999999999999; stored only'],
    [edge('other_field_account_update'), 'processed', null],
    ['{}', 'processed', 'payload.entry: Expected required property'],
  ]);
  t.equal(messageCount(app), 0);
  t.equal(app.messagesRepo.orphanCount(), 0);
});

t.test('bodies the route refuses: clean 4xx, nothing stored', async (t) => {
  const { app } = await setup(t);
  const cases: [string, { payload?: string; headers: Record<string, string> }, number, string][] = [
    ['not JSON', { payload: '{"entry": [', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON'],
    ['empty', { headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON'],
    ['JSON array', { payload: '[]', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_PAYLOAD'],
    ['JSON string', { payload: '"entry"', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_PAYLOAD'],
    ['JSON null', { payload: 'null', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_PAYLOAD'],
    ['prototype poisoning', { payload: '{"__proto__": {"x": 1}}', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON'],
    ['text/plain', { payload: '{}', headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['form', { payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['over 3 MB', { payload: `{"pad":"${'x'.repeat(3 * 1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } }, 413, 'PAYLOAD_TOO_LARGE'],
  ];
  for (const [name, request, status, code] of cases) {
    const headers = { ...request.headers, 'x-hub-signature-256': signBody(request.payload ?? '', SECRET) };
    const res = await app.inject({ method: 'POST', url: WEBHOOK_URL, ...request, headers });
    t.equal(res.statusCode, status, name);
    t.match(res.json(), { statusCode: status, code, error: String, message: String }, name);
  }
  t.same(inboxRows(app), []);
});

t.test('a body over the global 100 KB limit but under 3 MB is accepted here', async (t) => {
  const { app } = await setup(t);
  const big = envelope(PHONE, { messages: [textItem('wamid.big', CONTACT, 1767225600, 'y'.repeat(2 * 1024 * 1024))] });
  t.equal((await deliver(app, big)).statusCode, 200);
  t.equal(messageByWamid(app, 'wamid.big')?.text?.length, 2 * 1024 * 1024);
  t.equal(inboxRows(app)[0]?.rawBody, big);
});

t.test('50 callbacks at once: all stored and applied, committed in shared batches', async (t) => {
  const { app, user } = await setup(t);
  const bodies = Array.from({ length: 50 }, (_, i) => {
    if (i % 2 === 0) return envelope(PHONE, { messages: [textItem(`wamid.many.in.${i}`, `1555100${String(i).padStart(4, '0')}`, 1767225600 + i, `m${i}`)] });
    acceptedOutbound(app, user.id, `wamid.many.out.${i}`, CONTACT);
    return statusCallback(`wamid.many.out.${i}`, 'delivered', 1767225600 + i);
  });
  const before = app.writer.stats();
  const responses = await Promise.all(bodies.map((body) => deliver(app, body)));
  const after = app.writer.stats();
  t.same(responses.map((r) => r.statusCode), bodies.map(() => 200));

  const events = inboxRows(app);
  t.same(events.map((e) => e.rawBody).sort(), [...bodies].sort(), 'every body journaled as sent');
  t.ok(events.every((e) => e.state === 'processed' && e.error === null));
  t.equal(messageCount(app), 50);
  for (let i = 0; i < 50; i++) {
    const row = messageByWamid(app, `wamid.many.${i % 2 === 0 ? 'in' : 'out'}.${i}`)!;
    t.equal(row.status, i % 2 === 0 ? 'received' : 'delivered', `message ${i}`);
  }
  t.equal(after.writes - before.writes, 50, 'one write per callback, all through the single writer');
  const batches = after.batches - before.batches;
  t.ok(batches < 50, `group commit: ${batches} transactions for 50 callbacks`);
});

t.test('a 3 MB callback of malformed items: good items applied, the record and the log stay small', async (t) => {
  const { app, user, logs } = await setup(t);
  const outbound = acceptedOutbound(app, user.id, 'wamid.flood.OUT', CONTACT);
  const bad = 600_000;
  const body = envelope(PHONE, {
    messages: [textItem('wamid.flood.1', CONTACT, 1767225600, 'before'), ...Array<number>(bad).fill(1), textItem('wamid.flood.2', CONTACT, 1767225601, 'after')],
    statuses: [...Array.from({ length: bad }, () => ({})), statusItem('wamid.flood.OUT', 'delivered', 1767225602)],
  });
  t.ok(body.length > 2.5 * 1024 * 1024 && body.length < 3 * 1024 * 1024, `${body.length} bytes`);

  const res = await deliver(app, body);
  t.equal(res.statusCode, 200);
  t.same(['wamid.flood.1', 'wamid.flood.2'].map((w) => messageByWamid(app, w)?.text), ['before', 'after']);
  t.equal(app.messagesRepo.findById(outbound.id)!.status, 'delivered');

  const [event] = inboxRows(app);
  t.equal(event?.state, 'processed');
  const kept = Array.from({ length: 20 }, (_, i) => `entry[0].changes[0].messages[${i + 1}]: Expected object`);
  t.equal(event?.error, [...kept, `… and ${2 * bad - 20} more`].join('\n'), 'the first 20 notes and a count');
  const warning = logs().split('\n').find((line) => line.includes('webhook event not fully applied'));
  t.same(JSON.parse(warning!).notes, kept);
  t.equal(JSON.parse(warning!).moreNotes, 2 * bad - 20);
  t.ok(logs().length < 20_000, `logs of the whole test: ${logs().length} characters`);
});

t.test('a long note is clipped', async (t) => {
  const { app } = await setup(t);
  await deliverAll(t, app, [envelope('9'.repeat(100_000), { statuses: [statusItem('wamid.long', 'sent', 1767225600)] })]);
  const error = inboxRows(app)[0]!.error!;
  t.equal(error.length, 300);
  t.ok(error.startsWith('entry[0].changes[0]: no user has phone_number_id 999') && error.endsWith('9…'), error.slice(0, 60));
});
