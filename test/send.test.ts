import t from 'tap';
import { PHONE_ID, sendingApp, TO, TOKEN } from './fixtures/sending';
import { bearer, createUser } from './helper';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const MONTH = '2026-03';
const fixedClock = { options: { now: () => NOW } };

t.test('send: 201 with the answer, the message stored accepted, one credit used', async (t) => {
  const { app, sandbox, user, sendText } = await sendingApp(t, { credits: 5, ...fixedClock });
  const res = await sendText('Hello');
  t.equal(res.statusCode, 201);
  const body = res.json();
  t.same(body, { id: body.id, wamid: body.wamid, to: TO, type: 'text', status: 'accepted', credits_remaining: 4, created_at: NOW.toISOString(), contact_id: 1 });
  t.match(body.wamid, /^wamid\./);
  t.equal(sandbox.requests.length, 1);
  t.equal(sandbox.requests[0]!.body, `{"messaging_product":"whatsapp","recipient_type":"individual","to":"${TO}","type":"text","text":{"body":"Hello"}}`);

  const row = app.messagesRepo.findById(body.id)!;
  t.match(row, { userId: user.id, direction: 'outbound', type: 'text', text: 'Hello', toNumber: TO, wamid: body.wamid, status: 'accepted', errorJson: null, createdAt: NOW.getTime() });
  t.equal(row.payloadJson, sandbox.requests[0]!.body, 'the wire request is stored');
  t.equal(app.messagesRepo.conversationOf(body.id)!.contactWaId, TO);
  t.equal(app.creditsRepo.used(user.id, MONTH), 1);
});

t.test('send2: template params become the body parameters in order', async (t) => {
  const { app, sandbox, post } = await sendingApp(t, fixedClock);
  const res = await post('/api/message/send2', { to: TO, template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: '42', param3: 'Mon' });
  t.equal(res.statusCode, 201);
  t.match(res.json(), { to: TO, type: 'template', status: 'accepted', credits_remaining: 9 });
  t.equal(sandbox.requests[0]!.body, JSON.stringify({
    messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'template',
    template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [
      { type: 'text', text: 'Ana' }, { type: 'text', text: '42' }, { type: 'text', text: 'Mon' }] }] },
  }));
  t.equal(sandbox.requests[0]!.path, `/v23.0/${PHONE_ID}/messages`);
  t.equal(sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
  const row = app.messagesRepo.findById(res.json().id)!;
  t.match(row, { type: 'template', text: null, status: 'accepted' });
  t.same(JSON.parse(row.templateJson!), { name: 'order_update', language: 'en_US', params: ['Ana', '42', 'Mon'] });
});

t.test("the conversation is keyed by the network's wa_id; the typed number is kept", async (t) => {
  const { app, sandbox, sendText } = await sendingApp(t);
  sandbox.enqueue({ kind: 'accept', waId: '5215551234567' });
  const res = await sendText();
  t.equal(res.json().to, TO);
  const id = res.json().id;
  t.equal(app.messagesRepo.conversationOf(id)!.contactWaId, '5215551234567');
  t.equal(app.messagesRepo.findById(id)!.toNumber, TO);
});

t.test('the JWT may come from the cookie or the body token', async (t) => {
  const { app, user } = await sendingApp(t);
  const jwt = app.issueToken(user);
  const viaCookie = await app.inject({ method: 'POST', url: '/api/message/send', cookies: { token: jwt }, payload: { to: TO, type: 'text', text: { body: 'a' } } });
  t.equal(viaCookie.statusCode, 201);
  const viaBody = await app.inject({ method: 'POST', url: '/api/message/send', payload: { to: TO, type: 'text', text: { body: 'b' }, token: jwt } });
  t.equal(viaBody.statusCode, 201);
  const none = await app.inject({ method: 'POST', url: '/api/message/send', payload: { to: TO, type: 'text', text: { body: 'c' } } });
  t.equal(none.statusCode, 401);
  t.equal(none.json().code, 'UNAUTHORIZED');
});

t.test('409 MESSAGING_NOT_CONFIGURED without token or phone number id; nothing sent or charged', async (t) => {
  const { app, sandbox } = await sendingApp(t, fixedClock);
  for (const [email, fields] of [['a@x.io', { messagingToken: TOKEN }], ['b@x.io', { messagingPhoneNumberId: '999' }]] as const) {
    const user = await createUser(app, { email, monthlyCredits: 5, ...fields });
    const res = await app.inject({ method: 'POST', url: '/api/message/send', headers: bearer(app, user), payload: { to: TO, type: 'text', text: { body: 'x' } } });
    t.equal(res.statusCode, 409);
    t.same(res.json(), { statusCode: 409, code: 'MESSAGING_NOT_CONFIGURED', error: 'Conflict', message: 'Messaging is not configured for this account (token and phone number id); ask an administrator' });
    t.equal(app.creditsRepo.used(user.id, MONTH), 0);
  }
  t.equal(sandbox.requests.length, 0);
});

t.test('402 CREDITS_EXHAUSTED: nothing stored, nothing sent', async (t) => {
  const { app, sandbox, user, sendText } = await sendingApp(t, { credits: 1, ...fixedClock });
  t.equal((await sendText('one')).statusCode, 201);
  const res = await sendText('two');
  t.equal(res.statusCode, 402);
  t.same(res.json(), { statusCode: 402, code: 'CREDITS_EXHAUSTED', error: 'Payment Required', message: 'The monthly allowance of 1 credits is used up' });
  t.equal(sandbox.requests.length, 1);
  t.equal(app.creditsRepo.used(user.id, MONTH), 1);
  t.equal(app.messagesRepo.findById(2), undefined, 'the refused send left no message');
});

t.test('a user with no allowance gets 402 at once', async (t) => {
  const { sandbox, sendText } = await sendingApp(t, { credits: 0 });
  t.equal((await sendText()).statusCode, 402);
  t.equal(sandbox.requests.length, 0);
});

t.test('N parallel sends with k credits left make exactly k network calls', async (t) => {
  const { app, sandbox, user, sendText } = await sendingApp(t, { credits: 7, ...fixedClock });
  const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => sendText(`parallel ${i}`)));
  const codes = answers.map((a) => a.statusCode);
  t.equal(codes.filter((c) => c === 201).length, 7);
  t.equal(codes.filter((c) => c === 402).length, 18);
  t.equal(sandbox.requests.length, 7);
  t.equal(app.creditsRepo.used(user.id, MONTH), 7);
  const remaining = answers.filter((a) => a.statusCode === 201).map((a) => a.json().credits_remaining);
  t.same(remaining, [0, 0, 0, 0, 0, 0, 0], 'answered after all reservations: none left');
});
