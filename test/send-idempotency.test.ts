import t from 'tap';
import { sendingApp, textBody, TO } from './fixtures/sending';
import { bearer, createUser } from './helper';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const key = (k: string) => ({ 'idempotency-key': k });

t.test('same key and body: the first answer again, no new send or charge', async (t) => {
  const ctx = await sendingApp(t, { credits: 5, options: { now: () => NOW } });
  const first = await ctx.sendText('Hi', key('order-1'));
  t.equal(first.statusCode, 201);
  t.equal(first.headers['idempotent-replayed'], undefined);
  const again = await ctx.post('/api/message/send', { text: { body: 'Hi' }, type: 'text', to: TO }, key('order-1'));
  t.equal(again.statusCode, 201);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json(), 'the same answer, also with the fields in another order');
  t.equal(ctx.sandbox.requests.length, 1);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 1);
  t.equal(ctx.app.messagesRepo.findById(2), undefined, 'no second message');
});

t.test('same key, different body: 422 IDEMPOTENCY_KEY_REUSED, nothing sent', async (t) => {
  const ctx = await sendingApp(t);
  t.equal((await ctx.sendText('Hi', key('k'))).statusCode, 201);
  const other = await ctx.sendText('Hello', key('k'));
  t.equal(other.statusCode, 422);
  t.same(other.json(), { statusCode: 422, code: 'IDEMPOTENCY_KEY_REUSED', error: 'Unprocessable Entity', message: 'This Idempotency-Key was used with a different request' });
  const template = await ctx.post('/api/message/send2', { to: TO, template_name: 'x', language: 'en', param1: 'a', param2: 'b' }, key('k'));
  t.equal(template.statusCode, 422, 'the other endpoint with the same key');
  t.equal(ctx.sandbox.requests.length, 1);
});

t.test('keys are per user', async (t) => {
  const ctx = await sendingApp(t);
  const bo = { phoneNumberId: '106540352242923', token: 'EAAsandbox-token-of-bo' };
  ctx.sandbox.addAccount(bo);
  const other = await createUser(ctx.app, { email: 'bo@example.com', messagingToken: bo.token, messagingPhoneNumberId: bo.phoneNumberId, monthlyCredits: 1 });
  t.equal((await ctx.sendText('Hi', key('shared'))).statusCode, 201);
  const res = await ctx.app.inject({ method: 'POST', url: '/api/message/send', headers: { ...bearer(ctx.app, other), ...key('shared') }, payload: textBody('Hi') });
  t.equal(res.statusCode, 201);
  t.equal(res.headers['idempotent-replayed'], undefined);
  t.equal(ctx.sandbox.requests.length, 2);
});

t.test('a failed send frees its key: the retry with the same key sends again', async (t) => {
  const ctx = await sendingApp(t, { credits: 1 });
  ctx.sandbox.enqueue({ kind: 'fail', error: 'server_error' });
  t.equal((await ctx.sendText('Hi', key('retry-me'))).statusCode, 502);
  const retry = await ctx.sendText('Hi', key('retry-me'));
  t.equal(retry.statusCode, 201);
  t.equal(retry.headers['idempotent-replayed'], undefined);
  t.equal(ctx.sandbox.requests.length, 2);
});

t.test('402 does not keep the key either', async (t) => {
  const ctx = await sendingApp(t, { credits: 0 });
  t.equal((await ctx.sendText('Hi', key('k'))).statusCode, 402);
  ctx.app.usersRepo.update(ctx.user.id, { monthlyCredits: 1 }, NOW);
  t.equal((await ctx.sendText('Hi', key('k'))).statusCode, 201);
});

t.test('a duplicate while the first is in flight: 409 IDEMPOTENCY_KEY_IN_USE, then the replay', async (t) => {
  const ctx = await sendingApp(t);
  ctx.sandbox.enqueue({ kind: 'accept', delayMs: 300 });
  const first = ctx.sendText('Hi', key('slow'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const duplicate = await ctx.sendText('Hi', key('slow'));
  t.equal(duplicate.statusCode, 409);
  t.equal(duplicate.headers['retry-after'], '1');
  t.same(duplicate.json(), { statusCode: 409, code: 'IDEMPOTENCY_KEY_IN_USE', error: 'Conflict', message: 'A request with this Idempotency-Key is still in progress; retry shortly' });
  const answer = await first;
  t.equal(answer.statusCode, 201);
  const later = await ctx.sendText('Hi', key('slow'));
  t.same(later.json(), answer.json());
  t.equal(ctx.sandbox.requests.length, 1);
});

t.test('a key is kept 24 hours', async (t) => {
  let now = NOW;
  const ctx = await sendingApp(t, { options: { now: () => now } });
  const first = await ctx.sendText('Hi', key('daily'));
  now = new Date(NOW.getTime() + 24 * 3600 * 1000 - 1);
  t.same((await ctx.sendText('Hi', key('daily'))).json(), first.json());
  now = new Date(NOW.getTime() + 24 * 3600 * 1000 + 1);
  const fresh = await ctx.sendText('Hi', key('daily'));
  t.equal(fresh.statusCode, 201);
  t.not(fresh.json().id, first.json().id);
  t.equal(ctx.sandbox.requests.length, 2);
});

t.test('a key longer than 128 characters is a 400 naming the header', async (t) => {
  const ctx = await sendingApp(t);
  const res = await ctx.sendText('Hi', key('k'.repeat(129)));
  t.equal(res.statusCode, 400);
  t.same(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: 'headers/idempotency-key must NOT have more than 128 characters' });
  t.equal((await ctx.sendText('Hi', key('k'.repeat(128)))).statusCode, 201);
  t.equal(ctx.sandbox.requests.length, 1);
});

t.test('a key in flight is never taken over, however old: 409 while its request runs, then its answer', async (t) => {
  let now = NOW.getTime();
  const ctx = await sendingApp(t, { options: { now: () => new Date(now) } });
  ctx.sandbox.enqueue({ kind: 'accept', delayMs: 300 });
  const first = ctx.sendText('Hi', key('long'));
  while (ctx.sandbox.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  now += 3600 * 1000;
  const duplicate = await ctx.sendText('Hi', key('long'));
  t.equal(duplicate.statusCode, 409, 'an hour later, still the first request\'s key');
  t.equal((await first).statusCode, 201);
  t.equal(ctx.sandbox.requests.length, 1);
});
