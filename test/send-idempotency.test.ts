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

/** One unkeyed send first, so a refund given twice would show in the count (it never goes below zero). */
async function withOneCharged(ctx: Awaited<ReturnType<typeof sendingApp>>) {
  const first = await ctx.sendText('warm-up');
  if (first.statusCode !== 201) throw new Error(`warm-up send answered ${first.statusCode}`);
}

t.test('a refused keyed send repeated: the 502 again, one network call, refunded once', async (t) => {
  const ctx = await sendingApp(t, { credits: 5, options: { now: () => NOW } });
  await withOneCharged(ctx);
  ctx.sandbox.enqueue({ kind: 'fail', error: 'undeliverable' });
  const first = await ctx.sendText('Hi', key('refused'));
  t.equal(first.statusCode, 502);
  t.equal(first.json().code, 'MESSAGING_REJECTED');
  t.equal(first.headers['idempotent-replayed'], undefined);
  const again = await ctx.sendText('Hi', key('refused'));
  t.equal(again.statusCode, 502);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json(), 'the same body, upstream error included');
  t.equal(ctx.sandbox.requests.length, 2, 'the warm-up and the first keyed send only');
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 1, 'charged once, refunded once');
  t.equal(ctx.app.messagesRepo.findById(2)!.status, 'failed');
  t.equal(ctx.app.messagesRepo.findById(3), undefined, 'no second message');
});

t.test('a timed-out keyed send repeated: the 504 again, one network call, refunded once', async (t) => {
  const ctx = await sendingApp(t, { credits: 5, config: { messagingTimeoutMs: 300 }, options: { now: () => NOW } });
  await withOneCharged(ctx);
  ctx.sandbox.enqueue({ kind: 'accept', delayMs: 1500 });
  const first = await ctx.sendText('Hi', key('timed-out'));
  t.equal(first.statusCode, 504);
  t.same(first.json(), {
    statusCode: 504, code: 'MESSAGING_UNAVAILABLE', error: 'Gateway Timeout',
    message: 'No answer from the messaging network in time; the message may or may not have been sent; no credit was used',
  });
  const again = await ctx.sendText('Hi', key('timed-out'));
  t.equal(again.statusCode, 504);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json());
  t.equal(ctx.sandbox.requests.length, 2, 'the network (which may have delivered it) is never called again');
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 1, 'charged once, refunded once');
  t.equal(ctx.app.messagesRepo.findById(3), undefined, 'no second message');
});

t.test('a throttled keyed send repeated: the 429 again with its Retry-After, no new network call', async (t) => {
  const ctx = await sendingApp(t, { credits: 5, options: { now: () => NOW } });
  await withOneCharged(ctx);
  ctx.sandbox.enqueue({ kind: 'fail', error: 'pair_rate_limit' });
  const first = await ctx.sendText('Hi', key('throttled'));
  t.equal(first.statusCode, 429);
  t.equal(first.headers['retry-after'], '6');
  const again = await ctx.sendText('Hi', key('throttled'));
  t.equal(again.statusCode, 429);
  t.equal(again.headers['retry-after'], '6');
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(again.json(), first.json());
  t.equal(ctx.sandbox.requests.length, 2);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 1, 'charged once, refunded once');
});

t.test('a refused send keeps its key: a different body under it is still 422', async (t) => {
  const ctx = await sendingApp(t);
  ctx.sandbox.enqueue({ kind: 'fail', error: 'server_error' });
  t.equal((await ctx.sendText('Hi', key('kept'))).statusCode, 502);
  t.equal((await ctx.sendText('Hello', key('kept'))).statusCode, 422);
  t.equal(ctx.sandbox.requests.length, 1);
});

t.test('an answer given before the network was called (402) leaves the key free', async (t) => {
  const ctx = await sendingApp(t, { credits: 0 });
  const refused = await ctx.sendText('Hi', key('k'));
  t.equal(refused.statusCode, 402);
  t.equal(refused.json().code, 'CREDITS_EXHAUSTED');
  t.equal(ctx.sandbox.requests.length, 0);
  ctx.app.usersRepo.update(ctx.user.id, { monthlyCredits: 1 }, NOW);
  const retry = await ctx.sendText('Hi', key('k'));
  t.equal(retry.statusCode, 201);
  t.equal(retry.headers['idempotent-replayed'], undefined);
  t.equal(ctx.sandbox.requests.length, 1);
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
