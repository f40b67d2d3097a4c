// Deliveries to event endpoints, against real receivers on loopback: Standard Webhooks signatures verified with the
// `standardwebhooks` package, order and batches, retries with backoff and Retry-After, 410, poison events parked,
// 72 h of failures, no redirects, and addresses refused at save and at connect time (a resolver the test controls).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import type { App } from '../src/app';
import type { Resolved } from '../src/events/endpoint-address';
import { bearer, buildTestApp, createUser } from './helper';
import { deliver, envelope, textItem } from './fixtures/webhooks';

const SECRET = 'deliveries-secret';
const PHONE = '900000000000031';
type Tap = tap.Test;
interface Received { url: string; headers: IncomingMessage['headers']; body: string }
type Answer = (request: Received, res: ServerResponse) => void;

/** A receiver on loopback: records every request and answers with the next scripted answer (200 when none). */
async function receiver(t: Tap) {
  const received: Received[] = [];
  const script: Answer[] = [];
  let fallback: Answer = (_r, res) => res.writeHead(200).end('ok');
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      const request = { url: req.url ?? '', headers: req.headers, body };
      received.push(request);
      (script.shift() ?? fallback)(request, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  const { port } = server.address() as { port: number };
  return { received, script, setFallback: (answer: Answer) => { fallback = answer; }, url: `http://127.0.0.1:${port}/hook`, port };
}

async function start(t: Tap, overrides: Record<string, unknown> = {}, resolve?: (host: string) => Promise<Resolved[]>) {
  const clock = { now: Date.now() };
  const built = await buildTestApp(t, { messagingAppSecret: SECRET, eventEndpointsAllowHttp: true, eventEndpointsAllowedCidrs: ['127.0.0.0/8'], ...overrides },
    { now: () => new Date(clock.now), events: { random: () => 0.5, deliveryTimeoutMs: 300, ...(resolve ? { resolve } : {}) } });
  await built.app.ready();
  const owner = await createUser(built.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  return { ...built, clock, owner, auth: bearer(built.app, owner) };
}
let n = 0;
const inbound = (app: App, count = 1) => deliver(app, envelope(PHONE, {
  messages: Array.from({ length: count }, () => textItem(`wamid.d${++n}`, '15551230004', 1_790_000_000, `m${n}`)),
}), SECRET);
const ids = (r: Received) => (JSON.parse(r.body) as { events: { id: number }[] }).events.map((e) => e.id);
async function createEndpoint(app: App, userId: number, auth: Record<string, string>, payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: `/api/user/${userId}/event-endpoints`, headers: auth, payload });
}
const settled = async (app: App) => {
  app.eventDeliveries.tick();
  await app.eventDeliveries.idle();
};

t.test('a receiver verifies every delivery with standardwebhooks; one event each while keeping up, in order; the secret is shown once', async (t) => {
  const { app, owner, auth } = await start(t, { metricsToken: 'metrics-token-0123456789' });
  const hook = await receiver(t);
  const created = await createEndpoint(app, owner.id, auth, { url: hook.url, description: 'bot' });
  t.equal(created.statusCode, 201);
  const endpoint = created.json();
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.match(endpoint, { id: 1, url: hook.url, description: 'bot', types: null, state: 'enabled', cursor: 0, lag: 0, last_attempt: null, parked: [] });
  const stored = app.db.$client.prepare('SELECT secret_sealed FROM event_endpoints').pluck().get() as string;
  t.notOk(stored.includes(endpoint.secret.slice(6)), 'the secret is stored sealed');

  for (let i = 0; i < 3; i += 1) {
    await inbound(app);
    await settled(app);
  }
  t.same(hook.received.map(ids), [[1], [2], [3]]);
  const verifier = new Webhook(endpoint.secret);
  for (const request of hook.received) {
    const payload = verifier.verify(request.body, request.headers as Record<string, string>) as { events: { type: string }[] };
    t.equal(payload.events[0]!.type, 'message.received');
    t.match(request.headers['webhook-id'], /^msg_/);
  }
  t.throws(() => verifier.verify(hook.received[0]!.body.replace('m', 'n'), hook.received[0]!.headers as Record<string, string>), 'a changed body fails');

  const got = (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json();
  t.match(got, { cursor: 3, lag: 0, failures: 0, last_attempt: { status: 200, error: null } });
  t.notOk('secret' in got);
  t.notOk('secret' in (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints`, headers: auth })).json().endpoints[0]);
  const metrics = (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789' } })).body;
  t.match(metrics, /^gateway_events\{measure="written"\} 3$/m);
  t.match(metrics, /^gateway_events\{measure="lag_max"\} 0$/m);
  t.match(metrics, /^gateway_events\{measure="streams"\} 0$/m);
  t.match(metrics, /^gateway_event_deliveries_total\{outcome="delivered"\} 3$/m);
  const ping = await app.inject({ method: 'POST', url: `/api/user/${owner.id}/event-endpoints/1/test`, headers: auth });
  t.match(ping.json(), { delivered: true, status: 200, error: null });
  t.match(JSON.parse(hook.received.at(-1)!.body), { events: [{ id: 0, type: 'ping' }] });
});

t.test('a failing receiver: retried with the same webhook-id and backoff; behind, batches of up to 100 in order; Retry-After honoured', async (t) => {
  const { app, owner, auth, clock } = await start(t);
  const hook = await receiver(t);
  await createEndpoint(app, owner.id, auth, { url: hook.url });
  hook.script.push((_r, res) => res.writeHead(503).end('busy'));
  await inbound(app);
  await settled(app);
  const failed = (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json();
  t.match(failed, { cursor: 0, failures: 1, last_attempt: { status: 503, error: 'HTTP 503: busy' } });
  t.equal(failed.next_attempt_at, new Date(clock.now + 5000).toISOString(), '5 s with the jitter at its middle');
  for (let i = 0; i < 3; i += 1) await inbound(app, 50);
  await settled(app);
  t.equal(hook.received.length, 1, 'nothing sent before the backoff is over');

  clock.now += 5000;
  await settled(app);
  t.same(hook.received.map((r) => ids(r).length), [1, 1, 100, 50]);
  t.equal(hook.received[1]!.headers['webhook-id'], hook.received[0]!.headers['webhook-id'], 'the retry is the same batch under the same webhook-id');
  t.same(hook.received.slice(1).flatMap(ids), Array.from({ length: 151 }, (_, i) => i + 1), 'every event once, in order');

  hook.script.push((_r, res) => res.writeHead(429, { 'retry-after': '120' }).end());
  await inbound(app);
  await settled(app);
  const limited = (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json();
  t.equal(limited.next_attempt_at, new Date(clock.now + 120_000).toISOString(), 'Retry-After: 120 beats a 5 s backoff');
});

t.test('410 disables; re-enabling resumes from the cursor; replay delivers again', async (t) => {
  const { app, owner, auth } = await start(t);
  const hook = await receiver(t);
  await createEndpoint(app, owner.id, auth, { url: hook.url });
  await inbound(app);
  await settled(app);
  hook.script.push((_r, res) => res.writeHead(410).end());
  await inbound(app);
  await settled(app);
  await inbound(app);
  await settled(app);
  const gone = (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json();
  t.match(gone, { state: 'disabled', disabled_reason: 'the endpoint answered 410 Gone', cursor: 1, lag: 2 });
  t.equal(hook.received.length, 2);
  const enabled = await app.inject({ method: 'PUT', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth, payload: { enabled: true } });
  t.match(enabled.json(), { state: 'enabled', disabled_reason: null });
  await settled(app);
  t.same(hook.received.slice(2).map(ids), [[2], [3]], 'resumed from the cursor: the refused batch again, then the next; nothing lost');
  t.equal(hook.received[2]!.headers['webhook-id'], hook.received[1]!.headers['webhook-id'], 'the refused batch keeps its webhook-id');
  const replay = await app.inject({ method: 'POST', url: `/api/user/${owner.id}/event-endpoints/1/replay`, headers: auth, payload: { after: 0 } });
  t.equal(replay.json().cursor, 0);
  await settled(app);
  t.same(ids(hook.received.at(-1)!), [1, 2, 3]);
});

t.test('a rejected event is retried on its own and parked after 3 refusals; the rest flow; a parked event can be retried', async (t) => {
  const { app, owner, auth, clock } = await start(t);
  const hook = await receiver(t);
  await createEndpoint(app, owner.id, auth, { url: hook.url });
  hook.setFallback((request, res) => (ids(request).includes(2) ? res.writeHead(422).end('bad event') : res.writeHead(204).end()));
  // Behind: three events in one batch.
  hook.script.push((_r, res) => res.writeHead(503).end());
  await inbound(app);
  await settled(app);
  await inbound(app, 2);
  clock.now += 5000;
  await settled(app);
  for (let i = 0; i < 3; i += 1) {
    clock.now += 3_600_000;
    await settled(app);
  }
  const got = (await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json();
  t.match(got, { cursor: 3, lag: 0, parked: [{ event_id: 2, last_status: 422 }] });
  t.same(hook.received.map(ids), [[1], [1], [2, 3], [2], [2], [2], [3]],
    'event 1 failed then delivered; the batch refused, then event 2 alone, refused 3 times and parked; event 3 delivered');

  hook.setFallback((_r, res) => res.writeHead(200).end());
  const retried = await app.inject({ method: 'POST', url: `/api/user/${owner.id}/event-endpoints/1/parked/2/retry`, headers: auth });
  t.match(retried.json(), { delivered: true, status: 200 });
  t.same((await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json().parked, []);
  const again = await app.inject({ method: 'POST', url: `/api/user/${owner.id}/event-endpoints/1/parked/2/retry`, headers: auth });
  t.same([again.statusCode, again.json().code], [404, 'EVENT_NOT_PARKED']);
});

t.test('a receiver that times out is retried; 72 h of failures disable the endpoint with the reason; no redirect is followed', async (t) => {
  const { app, owner, auth, clock } = await start(t);
  const hook = await receiver(t);
  await createEndpoint(app, owner.id, auth, { url: hook.url });
  hook.setFallback(() => undefined); // never answers
  await inbound(app);
  await settled(app);
  t.match((await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json(),
    { failures: 1, last_attempt: { status: null, error: 'timeout' } });
  clock.now += 72 * 3_600_000;
  await settled(app);
  t.match((await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json(),
    { state: 'disabled', disabled_reason: 'failing for 72 h; last: timeout', cursor: 0 });

  const other = await receiver(t);
  other.setFallback((_r, res) => res.writeHead(302, { location: `${hook.url}/elsewhere` }).end());
  const before = hook.received.length;
  await createEndpoint(app, owner.id, auth, { url: other.url });
  await inbound(app);
  await settled(app);
  t.equal(other.received.length, 1);
  t.equal(hook.received.length, before, 'the redirect was not followed');
});

t.test('URLs refused at save: not https, loopback, private, link-local, CGNAT, multicast, reserved; at most 5 endpoints', async (t) => {
  const { app, owner, auth } = await start(t, { eventEndpointsAllowHttp: false, eventEndpointsAllowedCidrs: [] },
    async (host) => (host === 'inside.example' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '93.184.216.34', family: 4 }]));
  const refused = async (url: string, message: string) => {
    const res = await createEndpoint(app, owner.id, auth, { url });
    t.same([res.statusCode, res.json().code, res.json().message], [400, 'ENDPOINT_URL_REFUSED', message], url);
  };
  await refused('http://public.example/hook', 'url must use https (plain http is allowed only with EVENT_ENDPOINTS_ALLOW_HTTP=true)');
  const range = 'is a loopback, private, link-local, shared or reserved address';
  await refused('https://127.0.0.1/hook', `url refused: 127.0.0.1 resolves to 127.0.0.1 ${range}`);
  await refused('https://[::1]/hook', `url refused: [::1] resolves to ::1 ${range}`);
  await refused('https://[::ffff:127.0.0.1]/hook', `url refused: [::ffff:7f00:1] resolves to ::ffff:7f00:1 ${range}`);
  await refused('https://10.0.0.1/hook', `url refused: 10.0.0.1 resolves to 10.0.0.1 ${range}`);
  await refused('https://192.168.1.10/hook', `url refused: 192.168.1.10 resolves to 192.168.1.10 ${range}`);
  await refused('https://169.254.169.254/latest', `url refused: 169.254.169.254 resolves to 169.254.169.254 ${range}`);
  await refused('https://100.64.0.1/hook', `url refused: 100.64.0.1 resolves to 100.64.0.1 ${range}`);
  await refused('https://224.0.0.1/hook', `url refused: 224.0.0.1 resolves to 224.0.0.1 ${range}`);
  await refused('https://[fe80::1]/hook', `url refused: [fe80::1] resolves to fe80::1 ${range}`);
  await refused('https://inside.example/hook', `url refused: inside.example resolves to 10.1.2.3 ${range}`);
  await refused('https://user:pw@public.example/hook', 'url must not carry a user name or password');
  for (let i = 0; i < 5; i += 1) t.equal((await createEndpoint(app, owner.id, auth, { url: `https://public.example/${i}` })).statusCode, 201);
  const sixth = await createEndpoint(app, owner.id, auth, { url: 'https://public.example/6' });
  t.same([sixth.statusCode, sixth.json().code], [409, 'TOO_MANY_ENDPOINTS']);
  const other = await createUser(app, { email: 'other@example.com' });
  t.equal((await createEndpoint(app, owner.id, bearer(app, other), { url: 'https://public.example/x' })).statusCode, 403);
  t.equal((await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: bearer(app, other) })).statusCode, 403);
});

t.test('a DNS answer that changes after the save is checked again at connect time: nothing reaches the new address', async (t) => {
  const answers = { address: '127.0.0.1' };
  const { app, owner, auth } = await start(t, { eventEndpointsAllowedCidrs: ['127.0.0.1/32'] },
    async () => [{ address: answers.address, family: 4 }]);
  const hook = await receiver(t);
  // Every delivery on a new connection: each one resolves the name again.
  hook.setFallback((_r, res) => res.writeHead(200, { connection: 'close' }).end());
  t.equal((await createEndpoint(app, owner.id, auth, { url: `http://hooks.example:${hook.port}/hook` })).statusCode, 201);
  await inbound(app);
  await settled(app);
  t.equal(hook.received.length, 1, 'delivered while the name points at the allowed address');
  // The name now answers with another loopback address outside the allowed range (the test cannot connect to a private one).
  answers.address = '127.0.0.2';
  await inbound(app);
  await settled(app);
  t.equal(hook.received.length, 1, 'no connection to the new address');
  t.match((await app.inject({ method: 'GET', url: `/api/user/${owner.id}/event-endpoints/1`, headers: auth })).json(),
    { cursor: 1, failures: 1, last_attempt: { status: null, error: /hooks\.example resolves to 127\.0\.0\.2 is a loopback/ } });
});
