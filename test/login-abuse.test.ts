// Login abuse: the per-IP failure limit (password spraying, also in parallel bursts) and the bounded argon2 slots (503 BUSY).
import t, { type Test } from 'tap';
import type { App } from '../src/app';
import { FAILED_LOGIN_WINDOW_MS, MAX_FAILED_LOGINS, MAX_FAILED_LOGINS_PER_IP } from '../src/plugins/login-throttle';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

const login = (app: App, email: string, password = PASSWORD, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'POST', url: '/api/login', payload: { email, password }, remoteAddress });

// A wait long enough that no attempt is refused for want of a hash slot, whatever the machine's load.
const PATIENT = { hashSlots: { waitMs: 600_000 } };

const BUSY = { statusCode: 503, code: 'BUSY', error: 'Service Unavailable', message: 'The server is busy checking passwords; retry in a moment' };

function ipLimited(t: Test, res: Awaited<ReturnType<typeof login>>, why: string): void {
  t.equal(res.statusCode, 429, why);
  const retryAfter = Number(res.headers['retry-after']);
  t.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= FAILED_LOGIN_WINDOW_MS / 1000, `${why}: Retry-After ${retryAfter}`);
  t.same(res.json(), {
    statusCode: 429, code: 'TOO_MANY_LOGIN_ATTEMPTS', error: 'Too Many Requests',
    message: `Too many failed logins from your address; retry in ${retryAfter} s`,
  }, why);
  t.equal(res.headers['set-cookie'], undefined, why);
}

t.test('password spraying: 100 failures per client IP across e-mails, then 429 even for a fresh e-mail', async (t) => {
  const { app } = await buildTestApp(t, {}, PATIENT);
  await createUser(app, { email: 'ana@example.com' });
  const attacker = '203.0.113.9';
  const statuses: number[] = [];
  // 200 guesses, each on another e-mail (no pair limit ever applies), in small parallel batches.
  for (let i = 0; i < 200; i += 8) {
    const batch = await Promise.all(Array.from({ length: 8 }, (_, j) => login(app, `user${i + j}@example.com`, 'Winter2026!', attacker)));
    statuses.push(...batch.map((res) => res.statusCode));
    if (i === 120) t.equal((await login(app, 'ana@example.com', PASSWORD, '192.0.2.7')).statusCode, 200, 'another address logs in during the attack');
  }
  t.equal(statuses.filter((s) => s === 401).length, MAX_FAILED_LOGINS_PER_IP);
  t.equal(statuses.filter((s) => s === 429).length, 200 - MAX_FAILED_LOGINS_PER_IP);
  t.same(statuses.slice(0, MAX_FAILED_LOGINS_PER_IP), Array(MAX_FAILED_LOGINS_PER_IP).fill(401), 'the first 100 are checked');

  ipLimited(t, await login(app, 'fresh@example.com', 'whatever', attacker), 'a fresh e-mail');
  ipLimited(t, await login(app, 'ana@example.com', PASSWORD, attacker), 'even the right password');
  t.equal((await login(app, 'ana@example.com', PASSWORD, '192.0.2.7')).statusCode, 200, 'another address logs in after the attack');
  t.equal((await login(app, 'nobody@example.com', 'x', '192.0.2.7')).statusCode, 401, 'and is checked normally');
});

t.test('a parallel burst from one address gets at most 100 guesses checked; an IPv6 /64 is one address', async (t) => {
  const { app } = await buildTestApp(t, {}, PATIENT);
  await createUser(app, { email: 'ana@example.com' });
  // 150 guesses at once, each on its own e-mail, from hosts of one IPv6 /64 (one attacker's network).
  const answers = await Promise.all(Array.from({ length: 150 }, (_, i) =>
    login(app, `user${i}@example.com`, 'Winter2026!', `2001:db8:0:7::${(i + 1).toString(16)}`)));
  const statuses = answers.map((res) => res.statusCode);
  t.equal(statuses.filter((s) => s === 401).length, MAX_FAILED_LOGINS_PER_IP, 'attempts still being checked count');
  t.equal(statuses.filter((s) => s === 429).length, 150 - MAX_FAILED_LOGINS_PER_IP);
  ipLimited(t, answers.find((res) => res.statusCode === 429)!, 'a refused guess of the burst');
  ipLimited(t, await login(app, 'ana@example.com', PASSWORD, '2001:db8:0:7::ffff'), 'the same /64 afterwards');
  t.equal((await login(app, 'ana@example.com', PASSWORD, '2001:db8:0:8::1')).statusCode, 200, 'the next /64 is another address');
  t.equal((await login(app, 'ana@example.com', PASSWORD, '::ffff:192.0.2.7')).statusCode, 200, 'so is an IPv4 client');
});

t.test('the pair limit still comes first for one attacked account', async (t) => {
  const { app } = await buildTestApp(t, {}, PATIENT);
  await createUser(app, { email: 'ana@example.com' });
  for (let i = 0; i < MAX_FAILED_LOGINS; i++) await login(app, 'ana@example.com', 'wrong password');
  const limited = await login(app, 'ana@example.com');
  t.equal(limited.statusCode, 429);
  t.match(limited.json().message, /^Too many failed logins for this e-mail from your address; retry in \d+ s$/);
  t.equal((await login(app, 'ben@example.com', 'wrong password')).statusCode, 401, 'the address has failures left for other e-mails');
});

t.test('hash slots: logins beyond them wait, then get 503 BUSY; a BUSY attempt is no failure; afterwards the admin logs in at once', async (t) => {
  // One slot and a short wait, with the real argon2: a burst cannot all be served within the wait.
  const { app } = await buildTestApp(t, {}, { hashSlots: { slots: 1, waitMs: 20 } });
  await createAdmin(app);
  const burst = await Promise.all(Array.from({ length: MAX_FAILED_LOGINS }, () => login(app, 'admin@example.com', 'wrong password')));
  const busy = burst.filter((res) => res.statusCode === 503);
  const checked = burst.filter((res) => res.statusCode === 401);
  t.ok(busy.length > 0, `${busy.length} of the burst were BUSY`);
  t.equal(busy.length + checked.length, burst.length, 'every other attempt was checked');
  for (const res of busy) {
    t.same(res.json(), BUSY);
    t.equal(res.headers['retry-after'], '2');
    t.equal(res.headers['set-cookie'], undefined);
  }

  // Only checked attempts count: exactly the remaining failures of the pair are still allowed.
  for (let i = checked.length; i < MAX_FAILED_LOGINS; i++) {
    t.equal((await login(app, 'admin@example.com', 'wrong password', '127.0.0.1')).statusCode, 401, `failure ${i + 1}`);
  }
  t.equal((await login(app, 'admin@example.com', 'wrong password')).statusCode, 429, 'then the pair is limited');

  // The flood is over: the admin, from its own address, logs in at once (no slot is left taken).
  const admin = await login(app, 'admin@example.com', PASSWORD, '192.0.2.1');
  t.equal(admin.statusCode, 200);
  t.same(admin.json(), { message: 'Login success' });
});

t.test('creating and updating users share the hash slots', async (t) => {
  const { app } = await buildTestApp(t, {}, { hashSlots: { slots: 1, waitMs: 20 } });
  const admin = await createAdmin(app);
  const auth = bearer(app, admin);
  const creates = await Promise.all(Array.from({ length: 8 }, (_, i) => app.inject({
    method: 'POST', url: '/api/user/create', headers: auth, payload: { email: `user${i}@example.com`, password: `password-${i}` },
  })));
  const created = creates.filter((res) => res.statusCode === 201).length;
  const busy = creates.filter((res) => res.statusCode === 503);
  t.ok(busy.length > 0, `${busy.length} creates were BUSY`);
  t.equal(created + busy.length, creates.length);
  for (const res of busy) t.same(res.json(), BUSY);
  t.equal(app.usersRepo.list(50, 0).total, 1 + created, 'a BUSY create stores nothing');

  const ana = await createUser(app, { email: 'ana@example.com' });
  const updates = await Promise.all(Array.from({ length: 8 }, (_, i) => app.inject({
    method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { password: `new-password-${i}` },
  })));
  t.ok(updates.some((res) => res.statusCode === 503), 'some password changes were BUSY');
  t.ok(updates.every((res) => res.statusCode === 200 || res.statusCode === 503));
  const bumps = updates.filter((res) => res.statusCode === 200).length;
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 1 + bumps, 'a BUSY update changes nothing');

  const after = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'late@example.com', password: 'late-password' } });
  t.equal(after.statusCode, 201, 'once the burst is over, a create goes through');
});
