// POST /api/message/{id}/read: an inbound message marked read at the network (the sandbox), optionally with a typing
// indicator; only the owner's inbound messages; no credit; refusals mapped as for sends.
import t from 'tap';
import { sendingApp, PHONE_ID, TOKEN } from './fixtures/sending';
import { deliver, envelope, textItem } from './fixtures/webhooks';
import { bearer, createAdmin, createUser } from './helper';

const SECRET = 'read-secret';

t.test('marks an inbound message read through the sandbox, with and without a typing indicator; no credit', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 1, config: { messagingAppSecret: SECRET } });
  t.equal((await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.in1', '15551230001', 1767225600, 'Hello')] }), SECRET)).statusCode, 200);
  const plain = await post('/api/message/1/read', {});
  t.equal(plain.statusCode, 200);
  t.same(plain.json(), { id: 1, wamid: 'wamid.in1', typing_indicator: false });
  const typing = await post('/api/message/1/read', { typing_indicator: true });
  t.same(typing.json(), { id: 1, wamid: 'wamid.in1', typing_indicator: true });
  const empty = await app.inject({ method: 'POST', url: '/api/message/1/read', headers: bearer(app, user) });
  t.same([empty.statusCode, empty.json().code], [400, 'VALIDATION_ERROR'], 'a JSON body is required ({} for a plain mark-read)');

  t.same(sandbox.requests.map((r) => [r.method, r.path, JSON.parse(r.body)]), [
    ['POST', `/v23.0/${PHONE_ID}/messages`, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.in1' }],
    ['POST', `/v23.0/${PHONE_ID}/messages`, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.in1', typing_indicator: { type: 'text' } }],
  ]);
  t.equal(sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 0, 'no credit used');
  t.same(app.db.$client.prepare('SELECT status FROM messages WHERE id = 1').pluck().get(), 'received', 'nothing stored changes');
});

t.test('404 for an outbound, unknown or another user\'s message; 409 without messaging; 502 when the network refuses; bad bodies 400', async (t) => {
  const { app, sandbox, user, post, sendText } = await sendingApp(t, { config: { messagingAppSecret: SECRET } });
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.in1', '15551230001', 1767225600, 'Hello')] }), SECRET);
  t.equal((await sendText('out')).statusCode, 201);
  const outbound = await post('/api/message/2/read', {});
  t.same(outbound.json(), { statusCode: 404, code: 'MESSAGE_NOT_FOUND', error: 'Not Found', message: 'You have no inbound message 2' });
  t.equal((await post('/api/message/99/read', {})).json().code, 'MESSAGE_NOT_FOUND');
  const admin = await createAdmin(app);
  const byAdmin = await app.inject({ method: 'POST', url: '/api/message/1/read', headers: bearer(app, admin), payload: {} });
  t.same([byAdmin.statusCode, byAdmin.json().code], [404, 'MESSAGE_NOT_FOUND'], 'the owner only');
  for (const [payload, why] of [[{ typing_indicator: 'yes' }, 'not a boolean'], [{ extra: 1 }, 'unknown field']] as const) {
    const bad = await post('/api/message/1/read', payload);
    t.same([bad.statusCode, bad.json().code], [400, 'VALIDATION_ERROR'], why);
  }
  t.equal((await post('/api/message/abc/read', {})).statusCode, 400);
  const before = sandbox.requests.length;

  // A user without messaging configured: 409, as for sends.
  const bare = await createUser(app, { email: 'bare@example.com', messagingPhoneNumberId: '900000000000077' });
  await deliver(app, envelope('900000000000077', { messages: [textItem('wamid.b1', '15551230001', 1767225600, 'Hi')] }), SECRET);
  const id = app.db.$client.prepare("SELECT id FROM messages WHERE wamid = 'wamid.b1'").pluck().get() as number;
  const unconfigured = await app.inject({ method: 'POST', url: `/api/message/${id}/read`, headers: bearer(app, bare), payload: {} });
  t.same([unconfigured.statusCode, unconfigured.json().code], [409, 'MESSAGING_NOT_CONFIGURED']);
  t.equal(sandbox.requests.length, before, 'refusals before the network never reach it');

  // The network refuses (a token it does not know): 502 MESSAGING_REJECTED with its error.
  app.db.$client.prepare('UPDATE users SET messaging_token = ? WHERE id = ?').run(app.tokenCipher.seal('EAAwrong-token'), user.id);
  const refused = await post('/api/message/1/read', {});
  t.equal(refused.statusCode, 502);
  t.match(refused.json(), { statusCode: 502, code: 'MESSAGING_REJECTED', upstream: { http_status: 401 } });
});
