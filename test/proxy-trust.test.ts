// TRUST_PROXY against forged X-Forwarded-For chains: the login limit keys on the real client address.
import t, { type Test } from 'tap';
import type { App } from '../src/app';
import type { Config } from '../src/config';
import { buildTestApp, createUser, PASSWORD } from './helper';

const EMAIL = 'ana@example.com';
const PROXY = '10.0.0.5';
const CLIENT = '203.0.113.7';
const NEIGHBOUR = '203.0.113.8';
/** Failures allowed per (client IP, e-mail) pair before 429. */
const LIMIT = 10;

interface Teardown { teardown(fn: () => unknown): void }

async function appWith(t: Teardown, trustProxy: Config['trustProxy']) {
  const built = await buildTestApp(t, { trustProxy });
  await createUser(built.app, { email: EMAIL });
  return built;
}

/** A wrong-password login arriving from `remoteAddress` (the TCP peer), with an optional X-Forwarded-For. */
const failLogin = (app: App, remoteAddress: string, forwardedFor?: string) => app.inject({
  method: 'POST', url: '/api/login', remoteAddress, payload: { email: EMAIL, password: 'wrong-password' },
  headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
});

/** A different forged entry on every request, as an attacker rotating the header would send. */
const forged = (i: number) => `198.51.100.${i + 1}`;

/** `LIMIT` failures from `send(i)` are 401; the next is 429. */
async function exhaust(t: Test, send: (i: number) => ReturnType<typeof failLogin>) {
  for (let i = 0; i < LIMIT; i++) t.equal((await send(i)).statusCode, 401, `failure ${i + 1} is checked`);
  const blocked = await send(LIMIT);
  t.equal(blocked.statusCode, 429, 'then the pair is blocked');
  t.equal(blocked.json().code, 'TOO_MANY_LOGIN_ATTEMPTS');
  t.ok(Number(blocked.headers['retry-after']) > 0);
}

t.test('TRUST_PROXY=1: forged leftmost entries change nothing; the hop the proxy appended is the client', async (t) => {
  const { app, logs } = await appWith(t, 1);
  // The proxy appends the address it saw; everything left of it is whatever the client wrote.
  await exhaust(t, (i) => failLogin(app, PROXY, `${forged(i)}, ${forged(i + 50)}, ${CLIENT}`));
  t.equal((await failLogin(app, PROXY, CLIENT)).statusCode, 429, 'with no forged entries too');
  t.equal((await failLogin(app, PROXY, `${NEIGHBOUR}, ${CLIENT}`)).statusCode, 429, 'nor by claiming to be the neighbour');
  t.equal((await failLogin(app, PROXY, NEIGHBOUR)).statusCode, 401, 'another client behind the same proxy is not locked out');
  t.match(logs(), `"remoteAddress":"${CLIENT}"`, 'the log shows the real client');
  t.notMatch(logs(), /"remoteAddress":"198\.51\.100\./, 'never a forged one');
});

t.test('TRUST_PROXY=2: two proxies in a row are skipped, not a third entry the client wrote', async (t) => {
  const { app } = await appWith(t, 2);
  await exhaust(t, (i) => failLogin(app, PROXY, `${forged(i)}, ${CLIENT}, 10.0.0.9`));
  t.equal((await failLogin(app, PROXY, `${NEIGHBOUR}, 10.0.0.9`)).statusCode, 401);
});

t.test('TRUST_PROXY=false: X-Forwarded-For is ignored entirely', async (t) => {
  const { app, logs } = await appWith(t, false);
  await exhaust(t, (i) => failLogin(app, CLIENT, i % 2 === 0 ? forged(i) : `${forged(i)}, ${NEIGHBOUR}`));
  t.equal((await failLogin(app, CLIENT)).statusCode, 429, 'without the header too');
  t.equal((await failLogin(app, NEIGHBOUR)).statusCode, 401, 'the address it claimed is not blocked');
  t.equal((await failLogin(app, NEIGHBOUR, CLIENT)).statusCode, 401, 'and nobody can borrow the blocked address');
  t.notMatch(logs(), /"remoteAddress":"198\.51\.100\./);
});

t.test('TRUST_PROXY as a list: the client is the first untrusted hop from the right', async (t) => {
  const { app } = await appWith(t, ['127.0.0.1', '10.0.0.0/8']);
  // Through two trusted proxies (10.0.0.9 then 10.0.0.5): both skipped, the forged entries never reached.
  await exhaust(t, (i) => failLogin(app, PROXY, `${forged(i)}, ${CLIENT}, 10.0.0.9`));
  t.equal((await failLogin(app, PROXY, CLIENT)).statusCode, 429);
  t.equal((await failLogin(app, '127.0.0.1', CLIENT)).statusCode, 429, 'through the other trusted proxy too');
  t.equal((await failLogin(app, PROXY, NEIGHBOUR)).statusCode, 401, 'another client behind the proxy is not locked out');
});

t.test('TRUST_PROXY as a list: a peer not in the list has its X-Forwarded-For ignored', async (t) => {
  const { app, logs } = await appWith(t, ['10.0.0.5']);
  // A direct connection from CLIENT, forging a trusted proxy's chain: still keyed on CLIENT.
  await exhaust(t, (i) => failLogin(app, CLIENT, `${forged(i)}, ${PROXY}`));
  t.equal((await failLogin(app, NEIGHBOUR, CLIENT)).statusCode, 401, 'nobody can borrow the blocked address');
  t.equal((await failLogin(app, '10.0.0.6', CLIENT)).statusCode, 401, 'a neighbour of the proxy is not trusted');
  t.equal((await failLogin(app, PROXY, CLIENT)).statusCode, 429, 'the real proxy forwarding CLIENT is');
  t.notMatch(logs(), /"remoteAddress":"198\.51\.100\./);
});

/** A login arriving through the trusted proxy for `client`, with `email` and `password`. */
const viaProxy = (app: App, client: string, email: string, password: string, headers: Record<string, string> = {}) => app.inject({
  method: 'POST', url: '/api/login', remoteAddress: PROXY, payload: { email, password }, headers: { 'x-forwarded-for': client, ...headers },
});

t.test('one account takes at most 30 failed guesses per window from all addresses together (15 IPv6 /64s)', async (t) => {
  const { app } = await appWith(t, [PROXY]);
  await createUser(app, { email: 'ben@example.com' });
  const session = { authorization: `Bearer ${(await viaProxy(app, '192.0.2.50', EMAIL, PASSWORD)).cookies.find((c) => c.name === 'token')!.value}` };
  // 15 networks, 2 guesses each: each pair and each address stays far below its own limit.
  const statuses: number[] = [];
  for (let net = 1; net <= 15; net++) {
    for (const host of ['1', 'beef']) statuses.push((await viaProxy(app, `2001:db8:${net.toString(16)}::${host}`, EMAIL, 'wrong-password')).statusCode);
  }
  t.same(statuses, Array(30).fill(401), 'the first 30 guesses are checked');
  const limited = await viaProxy(app, '2001:db8:99::1', EMAIL, 'wrong-password');
  t.equal(limited.statusCode, 429, 'the 31st, from a 16th network');
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
  t.same(limited.json(), {
    statusCode: 429, code: 'TOO_MANY_LOGIN_ATTEMPTS', error: 'Too Many Requests',
    message: `Too many failed logins for this account; retry in ${retryAfter} s`,
  });
  t.equal(limited.headers['set-cookie'], undefined);
  const right = await viaProxy(app, '198.51.100.200', EMAIL.toUpperCase(), PASSWORD);
  t.equal(right.statusCode, 429, 'while the account is locked no password of it is checked, the right one included');
  t.equal(right.headers['set-cookie'], undefined);
  t.equal((await viaProxy(app, '2001:db8:99::1', 'ben@example.com', PASSWORD)).statusCode, 200, 'another account logs in from the same network');
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: session })).statusCode, 200, 'an existing session of the account is unaffected');
});

t.test('20 addresses of one IPv6 /64 behind the proxy share one per-address limit', async (t) => {
  const { app } = await appWith(t, [PROXY]);
  const statuses: number[] = [];
  // 100 guesses, each on another e-mail (no pair or account limit applies), from 20 hosts of one /64.
  for (let i = 0; i < 100; i += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, (_, j) =>
      viaProxy(app, `2001:db8:0:42::${((i + j) % 20 + 1).toString(16)}`, `user${i + j}@example.com`, 'wrong-password')));
    statuses.push(...batch.map((res) => res.statusCode));
  }
  t.same(statuses, Array(100).fill(401));
  const limited = await viaProxy(app, '2001:db8:0:42:ffff:ffff:ffff:ffff', 'fresh@example.com', 'wrong-password');
  t.equal(limited.statusCode, 429);
  t.match(limited.json().message, /^Too many failed logins from your address; retry in \d+ s$/);
  t.equal((await viaProxy(app, '2001:db8:0:43::1', EMAIL, PASSWORD)).statusCode, 200, 'the next /64 is another address');
});
