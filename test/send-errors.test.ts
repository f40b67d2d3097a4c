import t from 'tap';
import { sendingApp, TO, type Teardown } from './fixtures/sending';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const MONTH = '2026-03';

/** After a failed send: the message is failed with the error kept, and the credit is back. */
function assertSettled(t: Teardown & { match: Function; equal: Function }, ctx: Awaited<ReturnType<typeof sendingApp>>, error: Record<string, unknown>) {
  const row = ctx.app.messagesRepo.findById(1)!;
  t.match(row, { status: 'failed', wamid: null, toNumber: TO });
  t.match(JSON.parse(row.errorJson!), error);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, MONTH), 0, 'credit refunded');
}

const refusals = [
  ['undeliverable', 400, 131026, 'Unable to deliver message. Reasons can include: the recipient phone number is not a WhatsApp phone number.'],
  ['bad_token', 401, 190, null],
  ['server_error', 500, 131000, 'Message failed to send due to an unknown error.'],
] as const;

for (const [error, status, code, details] of refusals) {
  t.test(`the network refuses (${error}): 502 MESSAGING_REJECTED with upstream`, async (t) => {
    const ctx = await sendingApp(t, { options: { now: () => NOW } });
    ctx.sandbox.enqueue({ kind: 'fail', error });
    const res = await ctx.sendText();
    t.equal(res.statusCode, 502);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode', 'upstream']);
    t.match(body, {
      statusCode: 502, code: 'MESSAGING_REJECTED', error: 'Bad Gateway', message: /^The messaging network refused the message: /,
      upstream: { http_status: status, code, subcode: null, details, message: String, fbtrace_id: /^[\w-]{16}$/ },
    });
    t.same(Object.keys(body.upstream).sort(), ['code', 'details', 'fbtrace_id', 'http_status', 'message', 'subcode']);
    t.equal(ctx.sandbox.requests.length, 1, 'not retried');
    assertSettled(t, ctx, { code, title: body.upstream.message, details, upstream: body.upstream });
  });
}

t.test('a real wrong token (not scripted) is refused the same way', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  ctx.app.usersRepo.update(ctx.user.id, { messagingToken: 'expired-token' }, NOW);
  const res = await ctx.sendText();
  t.equal(res.statusCode, 502);
  t.match(res.json().upstream, { http_status: 401, code: 190 });
  t.equal(ctx.sandbox.requests[0]!.headers.authorization, 'Bearer expired-token');
});

t.test('throttled after the retries: 429 MESSAGING_RATE_LIMITED with Retry-After and upstream', async (t) => {
  const ctx = await sendingApp(t, { config: { messagingTimeoutMs: 1000 }, options: { now: () => NOW } });
  ctx.sandbox.enqueue(...Array.from({ length: 3 }, () => ({ kind: 'fail' as const, error: 'throttled' as const, retryAfter: 0 })));
  const res = await ctx.sendText();
  t.equal(res.statusCode, 429);
  t.equal(res.headers['retry-after'], '0');
  t.match(res.json(), { statusCode: 429, code: 'MESSAGING_RATE_LIMITED', error: 'Too Many Requests', upstream: { http_status: 429, code: 130429 } });
  t.equal(ctx.sandbox.requests.length, 3);
  assertSettled(t, ctx, { code: 130429 });
});

t.test('the pair rate limit: 429 at once, Retry-After 6, no retry', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  ctx.sandbox.enqueue({ kind: 'fail', error: 'pair_rate_limit' });
  const res = await ctx.sendText();
  t.equal(res.statusCode, 429);
  t.equal(res.headers['retry-after'], '6');
  t.match(res.json(), { code: 'MESSAGING_RATE_LIMITED', message: 'The messaging network is throttling; retry after 6 s', upstream: { code: 131056 } });
  t.equal(ctx.sandbox.requests.length, 1);
  assertSettled(t, ctx, { code: 131056 });
});

t.test('429 then success: one message, one credit', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  ctx.sandbox.enqueue({ kind: 'fail', error: 'throttled' });
  const res = await ctx.sendText();
  t.equal(res.statusCode, 201);
  t.equal(ctx.sandbox.requests.length, 2);
  t.equal(ctx.app.messagesRepo.findById(1)!.status, 'accepted');
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, MONTH), 1);
});

t.test('a connection reset before the answer is retried', async (t) => {
  const ctx = await sendingApp(t);
  ctx.sandbox.enqueue({ kind: 'reset' });
  t.equal((await ctx.sendText()).statusCode, 201);
  t.equal(ctx.sandbox.requests.length, 2);
});

t.test('timeout: 504 MESSAGING_UNAVAILABLE, no retry, failed and refunded', async (t) => {
  const ctx = await sendingApp(t, { config: { messagingTimeoutMs: 300 }, options: { now: () => NOW } });
  ctx.sandbox.enqueue({ kind: 'accept', delayMs: 1500 });
  const res = await ctx.sendText();
  t.equal(res.statusCode, 504);
  t.same(res.json(), {
    statusCode: 504, code: 'MESSAGING_UNAVAILABLE', error: 'Gateway Timeout',
    message: 'No answer from the messaging network in time; the message may or may not have been sent; no credit was used',
  });
  t.equal(ctx.sandbox.requests.length, 1, 'never retried: the network may have accepted it');
  assertSettled(t, ctx, { code: 'MESSAGING_UNAVAILABLE', title: 'No answer from the messaging network in time', details: 'no complete answer within 300 ms' });
});

t.test('network unreachable: 504, failed and refunded', async (t) => {
  const ctx = await sendingApp(t, { options: { now: () => NOW } });
  await ctx.sandbox.close();
  const res = await ctx.sendText();
  t.equal(res.statusCode, 504);
  t.same(res.json(), {
    statusCode: 504, code: 'MESSAGING_UNAVAILABLE', error: 'Gateway Timeout',
    message: 'The messaging network could not be reached; the message was not sent and no credit was used',
  });
  assertSettled(t, ctx, { code: 'MESSAGING_UNAVAILABLE', details: 'ECONNREFUSED' });
});

t.test('the refund goes to the month the credit was taken from', async (t) => {
  let now = new Date('2026-03-31T23:59:59.900Z');
  const ctx = await sendingApp(t, { credits: 1, options: { now: () => now } });
  ctx.sandbox.enqueue({ kind: 'fail', error: 'undeliverable', delayMs: 200 });
  const pending = ctx.sendText();
  // The credit is reserved before the network is called: wait until the (delayed) network has the request.
  while (ctx.sandbox.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 1, 'reserved in March');
  now = new Date('2026-04-01T00:00:00.100Z');
  t.equal((await pending).statusCode, 502);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-03'), 0, 'given back to March');
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-04'), 0);
});

t.test('the month is the calendar month in TIMEZONE and renews by itself', async (t) => {
  // 23:30 UTC on January 31st is already February 1st in Johannesburg (UTC+2, no DST).
  let now = new Date('2026-01-31T21:30:00.000Z');
  const ctx = await sendingApp(t, { credits: 1, config: { timezone: 'Africa/Johannesburg' }, options: { now: () => now } });
  t.equal((await ctx.sendText('january')).statusCode, 201);
  now = new Date('2026-01-31T23:30:00.000Z');
  const february = await ctx.sendText('february');
  t.equal(february.statusCode, 201, 'a new month: the allowance is back');
  t.equal(february.json().credits_remaining, 0);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-01'), 1);
  t.equal(ctx.app.creditsRepo.used(ctx.user.id, '2026-02'), 1);
  now = new Date('2026-02-28T21:59:59.000Z');
  t.equal((await ctx.sendText('still february')).statusCode, 402);
  now = new Date('2026-02-28T22:00:00.000Z');
  t.equal((await ctx.sendText('march')).statusCode, 201);
  t.equal(ctx.sandbox.requests.length, 3);
});
