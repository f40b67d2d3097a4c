import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { parseRetryAfter } from '../src/messaging/answers';
import { createMessagingClient, type OutboundMessage } from '../src/messaging/client';
import { PHONE_ID, testSandbox, TO, TOKEN, type Teardown } from './fixtures/sending';

const account = { phoneNumberId: PHONE_ID, token: TOKEN };
const text: OutboundMessage = { kind: 'text', to: TO, body: 'Hello "there" ✓' };

/**
 * The retry budget's clock: it moves only when the client waits between attempts, and records each wait
 * (so no test waits for real, and none measures the wall clock).
 */
function fakeClock() {
  const clock = { at: 0, waits: [] as number[], now: () => clock.at, sleep: async (ms: number) => {
    clock.waits.push(ms);
    clock.at += ms;
  } };
  return clock;
}

/** The generous default keeps a loaded machine from failing tests that are not about time. */
async function setup(tt: Teardown, timeoutMs = 2000) {
  const sandbox = await testSandbox(tt);
  const clock = fakeClock();
  const client = createMessagingClient({ baseUrl: `${sandbox.url}/v23.0`, timeoutMs, clock });
  tt.teardown(() => client.close());
  return { sandbox, client, clock };
}

/** A server that answers every request with `status` and `body` as given (not the network's shape). */
async function rawServer(tt: Teardown, status: number, body: string) {
  const server = createServer((_request, response) => response.writeHead(status, { 'content-type': 'text/html' }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('text: the exact wire request, and the accepted answer', async (t) => {
  const { sandbox, client } = await setup(t);
  const result = await client.send(account, text);
  t.match(result, { kind: 'accepted', wamid: /^wamid\.[A-Za-z0-9+/=]+$/, waId: TO });
  t.equal(sandbox.requests.length, 1);
  const [request] = sandbox.requests;
  t.equal(request!.method, 'POST');
  t.equal(request!.path, `/v23.0/${PHONE_ID}/messages`);
  t.equal(request!.headers.authorization, `Bearer ${TOKEN}`);
  t.equal(request!.headers['content-type'], 'application/json');
  t.equal(request!.body, '{"messaging_product":"whatsapp","recipient_type":"individual","to":"15551234567","type":"text","text":{"body":"Hello \\"there\\" ✓"}}');
});

t.test('template: params become the body parameters in order', async (t) => {
  const { sandbox, client } = await setup(t);
  const result = await client.send(account, { kind: 'template', to: TO, name: 'order_update', language: 'en_US', params: ['Ana', '42', 'Monday'] });
  t.equal(result.kind, 'accepted');
  t.same(JSON.parse(sandbox.requests[0]!.body), {
    messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'template',
    template: {
      name: 'order_update', language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: '42' }, { type: 'text', text: 'Monday' }] }],
    },
  });
});

t.test("the recipient's wa_id comes from the answer's contacts", async (t) => {
  const { sandbox, client } = await setup(t);
  sandbox.enqueue({ kind: 'accept', waId: '5215551234567' });
  t.match(await client.send(account, text), { kind: 'accepted', waId: '5215551234567' });
});

t.test('refusals are parsed into upstream, without a retry', async (t) => {
  const { sandbox, client } = await setup(t);
  const cases = [
    ['undeliverable', 400, 131026, null, 'Unable to deliver message. Reasons can include: the recipient phone number is not a WhatsApp phone number.'],
    ['server_error', 500, 131000, null, 'Message failed to send due to an unknown error.'],
    ['unknown_phone_number', 400, 100, 33, null],
  ] as const;
  for (const [error, status, code, subcode, details] of cases) {
    sandbox.reset();
    sandbox.enqueue({ kind: 'fail', error });
    const result = await client.send(account, text);
    t.match(result, { kind: 'rejected', upstream: { http_status: status, code, subcode, details, message: String, fbtrace_id: /^[\w-]{16}$/ } }, error);
    t.equal(sandbox.requests.length, 1, `${error} is not retried`);
  }
});

t.test('a wrong token is the network\'s 401 / 190', async (t) => {
  const { sandbox, client } = await setup(t);
  const result = await client.send({ ...account, token: 'wrong' }, text);
  t.match(result, { kind: 'rejected', upstream: { http_status: 401, code: 190, subcode: null, details: null, message: 'Invalid OAuth access token - Cannot parse access token' } });
  t.equal(sandbox.requests.length, 1);
});

t.test('HTTP 429 is retried, then succeeds', async (t) => {
  const { sandbox, client, clock } = await setup(t);
  sandbox.enqueue({ kind: 'fail', error: 'throttled' });
  t.equal((await client.send(account, text)).kind, 'accepted');
  t.equal(sandbox.requests.length, 2);
  t.equal(sandbox.requests[0]!.body, sandbox.requests[1]!.body, 'the same request again');
  t.equal(clock.waits.length, 1, 'one wait, between the two attempts');
  t.ok(clock.waits[0]! >= 100 && clock.waits[0]! <= 200, `after a backoff of 100–200 ms (${clock.waits[0]} ms)`);
});

t.test('throttling and unavailability codes in a 4xx/5xx are retried', async (t) => {
  const { sandbox, client } = await setup(t, 1000);
  sandbox.enqueue({ kind: 'fail', error: 'app_rate_limit' }, { kind: 'fail', error: 'service_unavailable' });
  t.equal((await client.send(account, text)).kind, 'accepted');
  t.equal(sandbox.requests.length, 3);
});

t.test('persistent throttling: 3 attempts at most, then throttled', async (t) => {
  const { sandbox, client, clock } = await setup(t, 1000);
  sandbox.enqueue(...Array.from({ length: 5 }, () => ({ kind: 'fail' as const, error: 'throttled' as const })));
  t.match(await client.send(account, text), { kind: 'throttled', retryAfterSeconds: 1, upstream: { http_status: 429, code: 130429 } });
  t.equal(sandbox.requests.length, 3);
  t.equal(clock.waits.length, 2, 'a wait before each retry');
  const waited = clock.waits.reduce((sum, ms) => sum + ms, 0);
  // Each retry starts with at least half a timeout of the 2 × timeout budget left.
  t.ok(waited + 1000 / 2 <= 2 * 1000, `within 2 × the timeout (${clock.waits.join(' + ')} ms of waits)`);
});

t.test('the pair rate limit (131056) is never retried', async (t) => {
  const { sandbox, client } = await setup(t, 1000);
  sandbox.enqueue({ kind: 'fail', error: 'pair_rate_limit' });
  t.match(await client.send(account, text), { kind: 'throttled', retryAfterSeconds: 6, upstream: { http_status: 400, code: 131056 } });
  t.equal(sandbox.requests.length, 1);
});

t.test('Retry-After is waited for when the budget allows it', async (t) => {
  const { sandbox, client, clock } = await setup(t, 1000);
  sandbox.enqueue({ kind: 'fail', error: 'throttled', retryAfter: 1 });
  t.equal((await client.send(account, text)).kind, 'accepted');
  t.equal(sandbox.requests.length, 2);
  t.same(clock.waits, [1000], 'waited the Retry-After second (longer than the backoff)');
});

t.test('a Retry-After beyond the budget ends the send at once, passing it on', async (t) => {
  const { sandbox, client, clock } = await setup(t, 300);
  sandbox.enqueue({ kind: 'fail', error: 'throttled', retryAfter: 30 });
  t.match(await client.send(account, text), { kind: 'throttled', retryAfterSeconds: 30 });
  t.equal(sandbox.requests.length, 1);
  t.same(clock.waits, [], 'no wait');
});

t.test('a timeout after the request was written is never retried', async (t) => {
  const { sandbox, client, clock } = await setup(t, 300);
  sandbox.enqueue({ kind: 'accept', delayMs: 1000 });
  // The detail names the deadline the one attempt had: the timeout, not what was left of the budget after a wait.
  t.same(await client.send(account, text), { kind: 'unavailable', reason: 'timeout', detail: 'no complete answer within 300 ms' });
  t.equal(sandbox.requests.length, 1);
  t.same(clock.waits, [], 'no wait, no retry');
});

t.test('a connection reset before any answer is retried', async (t) => {
  const { sandbox, client } = await setup(t);
  sandbox.enqueue({ kind: 'reset' });
  t.equal((await client.send(account, text)).kind, 'accepted');
  t.equal(sandbox.requests.length, 2);
});

t.test('a refused connection is unavailable', async (t) => {
  const { sandbox, client } = await setup(t);
  await sandbox.close();
  t.match(await client.send(account, text), { kind: 'unavailable', reason: 'unreachable', detail: 'ECONNREFUSED' });
});

t.test('closing the client waits for the calls under way, then refuses new ones without reaching the network', async (t) => {
  const { sandbox, client } = await setup(t);
  sandbox.enqueue({ kind: 'accept', delayMs: 300 });
  const underWay = client.send(account, text);
  while (sandbox.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const closing = client.close();
  t.equal((await underWay).kind, 'accepted', 'the call under way got its answer');
  await closing;
  t.match(await client.send(account, text), { kind: 'unavailable', reason: 'unreachable' });
  t.equal(sandbox.requests.length, 1, 'nothing sent after close');
});

t.test('an error answer that is not the network\'s JSON still yields upstream', async (t) => {
  const client = createMessagingClient({ baseUrl: await rawServer(t, 502, '<html>Bad gateway</html>'), timeoutMs: 2000 });
  t.teardown(() => client.close());
  t.same(await client.send(account, text), {
    kind: 'rejected', upstream: { http_status: 502, code: null, subcode: null, message: 'HTTP 502 Bad Gateway', details: null, fbtrace_id: null },
  });
});

t.test('a 2xx without a message id is an unknown outcome, not a success', async (t) => {
  const client = createMessagingClient({ baseUrl: await rawServer(t, 200, '{"messaging_product":"whatsapp"}'), timeoutMs: 2000 });
  t.teardown(() => client.close());
  t.match(await client.send(account, text), { kind: 'unavailable', reason: 'bad_answer' });
});

t.test('Retry-After is read as seconds or as an HTTP date', async (t) => {
  const now = Date.parse('2026-03-10T12:00:00Z');
  t.equal(parseRetryAfter('120', now), 120);
  t.equal(parseRetryAfter('Tue, 10 Mar 2026 12:00:30 GMT', now), 30);
  t.equal(parseRetryAfter('Tue, 10 Mar 2026 11:00:00 GMT', now), 0, 'a date in the past: now');
  t.equal(parseRetryAfter('soon', now), undefined);
  t.equal(parseRetryAfter(undefined, now), undefined);
});

t.test('a failed call is logged with its cause (code and message), never with the token', async (t) => {
  const sandbox = await testSandbox(t);
  const logged: { details: Record<string, unknown>; message: string }[] = [];
  const log = { warn: (details: object, message: string) => logged.push({ details: details as Record<string, unknown>, message }) };
  const client = createMessagingClient({ baseUrl: `${sandbox.url}/v23.0`, timeoutMs: 2000, log });
  t.teardown(() => client.close());
  // A token with a character no HTTP header may carry: undici refuses before sending anything.
  const badToken = `${TOKEN}\nX-Injected: 1`;
  t.match(await client.send({ phoneNumberId: PHONE_ID, token: badToken }, text), { kind: 'unavailable', reason: 'unreachable', detail: 'UND_ERR_INVALID_ARG' });
  t.equal(sandbox.requests.length, 0);
  t.match(logged, [{ message: 'messaging network call failed', details: { code: 'UND_ERR_INVALID_ARG', error: 'invalid authorization header', answered: false } }]);

  await sandbox.close();
  t.match(await client.send(account, text), { kind: 'unavailable', detail: 'ECONNREFUSED' });
  t.match(logged.at(-1), { message: 'messaging network call failed', details: { code: 'ECONNREFUSED', error: /ECONNREFUSED/ } });
  const everything = JSON.stringify(logged);
  t.notOk(everything.includes(TOKEN), 'the token is in no log entry');
});
