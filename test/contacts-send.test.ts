// Sending to a BSUID and to a contact, end to end through the sandbox network: the wire field used, the answer's
// contact_id, the conversation the network's answer decides, and the recipient errors.
import t from 'tap';
import { createUser } from './helper';
import { sendingApp, TO } from './fixtures/sending';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const BSUID = 'US.13491208655302741918';
const text = (recipient: Record<string, unknown>, body = 'Hi') => ({ ...recipient, type: 'text', text: { body } });
const lastWire = (ctx: Awaited<ReturnType<typeof sendingApp>>) => JSON.parse(String(ctx.sandbox.requests.at(-1)!.body)) as Record<string, unknown>;

async function listing(ctx: Awaited<ReturnType<typeof sendingApp>>, query = '') {
  const res = await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations${query}`, headers: ctx.auth });
  return res.json() as { contact: Record<string, unknown>; messages: Record<string, unknown>[] }[];
}

t.test('a send to a BSUID goes in the wire field `recipient`; its conversation is that user\'s contact', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  ctx.sandbox.addUser({ userId: BSUID, username: '@pablomorales', phoneShareable: false });
  const res = await ctx.post('/api/message/send', text({ recipient: BSUID }));
  t.equal(res.statusCode, 201, res.body);
  const answer = res.json();
  t.strictSame(answer, {
    id: answer.id, wamid: answer.wamid, to: BSUID, type: 'text', status: 'accepted', credits_remaining: 9,
    created_at: NOW.toISOString(), contact_id: answer.contact_id,
  });
  const wire = lastWire(ctx);
  t.equal(wire.recipient, BSUID);
  t.notOk('to' in wire, 'never in `to`');
  const [conversation] = await listing(ctx);
  t.strictSame(conversation!.contact, { id: answer.contact_id, wa_id: null, user_id: BSUID, username: null, name: null });
  t.match(conversation!.messages, [{ id: answer.id, to: BSUID, origin: 'api', status: 'accepted' }]);
});

t.test('a send to a phone learns the BSUID the network answers; contact_id sends to the phone, in the same conversation', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  ctx.sandbox.addUser({ phone: TO, userId: BSUID, name: 'Ana' });
  const first = await ctx.post('/api/message/send', text({ to: TO }));
  t.equal(first.statusCode, 201, first.body);
  const contactId = first.json().contact_id as number;
  const second = await ctx.post('/api/message/send', text({ contact_id: contactId }, 'again'));
  t.equal(second.statusCode, 201, second.body);
  t.equal(second.json().contact_id, contactId);
  t.equal(second.json().to, TO);
  t.equal(lastWire(ctx).to, TO);
  const body = await listing(ctx);
  t.equal(body.length, 1);
  t.strictSame(body[0]!.contact, { id: contactId, wa_id: TO, user_id: BSUID, username: null, name: null });
  t.same(body[0]!.messages.map((m) => m.text), ['Hi', 'again']);
  t.equal((await listing(ctx, `?contact=${BSUID}`)).length, 1, 'found by its BSUID too');
});

t.test('a contact known only by its BSUID (a phone-less inbound) is answered through `recipient` with contact_id', async (t) => {
  const ctx = await sendingApp(t);
  ctx.sandbox.addUser({ userId: BSUID, phoneShareable: false });
  // What a phone-less user's first message leaves: a contact with a BSUID and no number.
  ctx.app.contacts.resolve(ctx.user.id, { waId: null, bsuid: BSUID, parentBsuid: null, name: 'Sheena', username: '@sheena' }, NOW.getTime());
  const contact = ctx.app.db.$client.prepare('SELECT id FROM contacts WHERE bsuid = ?').pluck().get(BSUID) as number;
  const res = await ctx.post('/api/message/send2', { contact_id: contact, template_name: 'order_update', language: 'en_US', param1: 'a', param2: 'b' });
  t.equal(res.statusCode, 201, res.body);
  t.equal(res.json().contact_id, contact);
  t.match(lastWire(ctx), { recipient: BSUID, type: 'template' });
  t.notOk('to' in lastWire(ctx));
});

t.test('recipient errors: none or several is 400, another user\'s contact is 404; nothing sent or charged', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  const other = await createUser(ctx.app, { email: 'other@example.com' });
  const theirs = ctx.app.contacts.resolve(other.id, { waId: '15550009999', bsuid: null, parentBsuid: null, name: null, username: null }, 0)!;
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['none', {}, 400, 'body must name its recipient: one of to (phone number), recipient (user id) or contact_id'],
    ['two', { to: TO, recipient: BSUID }, 400, 'body names its recipient 2 times (to, recipient): give exactly one of to, recipient or contact_id'],
    ['not yours', { contact_id: theirs.contactId }, 404, `You have no contact ${theirs.contactId}`],
  ];
  for (const [label, recipient, status, message] of cases) {
    const res = await ctx.post('/api/message/send', text(recipient));
    t.equal(res.statusCode, status, label);
    t.strictSame(res.json(), { statusCode: status, code: status === 404 ? 'CONTACT_NOT_FOUND' : 'VALIDATION_ERROR',
      error: status === 404 ? 'Not Found' : 'Bad Request', message }, label);
  }
  const bad = await ctx.post('/api/message/send', text({ recipient: 'not a bsuid' }));
  t.equal(bad.statusCode, 400);
  t.equal(ctx.sandbox.requests.length, 0);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-11') ?? 0, 0);
});

t.test('131062 (this message type cannot go to a BSUID) is a 502 that says so; the credit is refunded', async (t) => {
  const ctx = await sendingApp(t);
  ctx.sandbox.enqueue({ kind: 'fail', code: 131062, message: '(#131062) Business-scoped user ID not supported for this message' });
  const res = await ctx.post('/api/message/send2', { recipient: BSUID, template_name: 'otp', language: 'en', param1: '123456', param2: 'x' });
  t.equal(res.statusCode, 502);
  t.match(res.json(), {
    code: 'MESSAGING_REJECTED', upstream: { code: 131062 },
    message: /this message type \(e\.g\. a one-tap or zero-tap authentication template\) cannot be sent to a user id \(BSUID\)/,
  });
  t.equal(ctx.sandbox.requests.length, 1);
});
