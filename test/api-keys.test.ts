// API keys: created (shown once, stored hashed), listed, revoked at once; Bearer gwk_… works on /api for its user's
// role, not on the HTML pages; a disabled or deleted user's keys stop at once; at most 20; never in logs.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';

const NOW = Date.UTC(2026, 10, 20, 12, 30, 45);

async function newKey(app: App, userId: number, auth: Record<string, string>, name = 'bot') {
  return app.inject({ method: 'POST', url: `/api/user/${userId}/keys`, headers: auth, payload: { name } });
}
const withKey = (key: string) => ({ authorization: `Bearer ${key}` });

t.test('a key is shown once, stored as its SHA-256, listed by its last 4, and authenticates as its user on /api', async (t) => {
  const clock = { now: NOW };
  const { app, logs } = await buildTestApp(t, {}, { now: () => new Date(clock.now) });
  const ana = await createUser(app, { email: 'ana@example.com' });
  const created = await newKey(app, ana.id, bearer(app, ana), 'support bot');
  t.equal(created.statusCode, 201);
  const body = created.json();
  t.match(body.key, /^gwk_[A-Za-z0-9_-]{43}$/);
  t.same(body, { id: 1, name: 'support bot', key: body.key, created_at: new Date(NOW).toISOString() });
  const stored = app.db.$client.prepare('SELECT hash, last4 FROM api_keys').get() as { hash: string; last4: string };
  t.same(stored, { hash: createHash('sha256').update(body.key).digest('hex'), last4: body.key.slice(-4) });

  clock.now = NOW + 90_000;
  const me = await app.inject({ method: 'GET', url: '/api/me', headers: withKey(body.key) });
  t.equal(me.statusCode, 200);
  t.equal(me.json().email, 'ana@example.com');
  // A CLIENT's key has a CLIENT's rights.
  t.equal((await app.inject({ method: 'GET', url: '/api/users', headers: withKey(body.key) })).statusCode, 403);
  await new Promise((resolve) => setImmediate(resolve));
  const listed = await app.inject({ method: 'GET', url: `/api/user/${ana.id}/keys`, headers: withKey(body.key) });
  t.same(listed.json(), { keys: [{
    id: 1, name: 'support bot', last4: body.key.slice(-4), created_at: new Date(NOW).toISOString(),
    last_used_at: new Date(Math.floor((NOW + 90_000) / 60_000) * 60_000).toISOString(),
  }] });
  // Not for the HTML pages, even an ADMIN's.
  const admin = await createAdmin(app);
  const adminKey = (await newKey(app, admin.id, bearer(app, admin))).json().key as string;
  t.equal((await app.inject({ method: 'GET', url: '/api/users', headers: withKey(adminKey) })).statusCode, 200);
  const page = await app.inject({ method: 'GET', url: '/admin', headers: withKey(adminKey) });
  t.not(page.statusCode, 200, 'the admin pages do not take a key');
  t.notOk(logs().includes(body.key) || logs().includes(adminKey), 'keys never in logs');
});

t.test('revoked, unknown, disabled and deleted: refused at once', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await createAdmin(app);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const key = (await newKey(app, ana.id, bearer(app, ana))).json().key as string;
  const me = () => app.inject({ method: 'GET', url: '/api/me', headers: withKey(key) });
  t.equal((await me()).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: withKey(`${key.slice(0, -1)}x`) })).json().code, 'UNAUTHORIZED');

  await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: bearer(app, admin), payload: { is_active: false } });
  t.same([(await me()).statusCode, (await me()).json().code], [403, 'ACCOUNT_DISABLED']);
  await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: bearer(app, admin), payload: { is_active: true } });
  t.equal((await me()).statusCode, 200);

  const revoke = await app.inject({ method: 'DELETE', url: `/api/user/${ana.id}/keys/1`, headers: bearer(app, ana) });
  t.equal(revoke.statusCode, 204);
  t.same([(await me()).statusCode, (await me()).json().code], [401, 'UNAUTHORIZED']);
  const again = await app.inject({ method: 'DELETE', url: `/api/user/${ana.id}/keys/1`, headers: bearer(app, ana) });
  t.same([again.statusCode, again.json().code], [404, 'KEY_NOT_FOUND']);

  const second = (await newKey(app, ana.id, bearer(app, admin))).json().key as string;
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: withKey(second) })).statusCode, 200, 'an ADMIN may create a key for a user');
  await app.inject({ method: 'DELETE', url: `/api/user/delete/${ana.id}`, headers: bearer(app, admin) });
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: withKey(second) })).statusCode, 401);
  t.equal(app.db.$client.prepare('SELECT count(*) FROM api_keys').pluck().get(), 0, "the user's keys went with it");
});

t.test('at most 20 keys per user; another CLIENT cannot touch them; bad input 400', async (t) => {
  const { app } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const bob = await createUser(app, { email: 'bob@example.com' });
  for (let i = 0; i < 20; i += 1) t.equal((await newKey(app, ana.id, bearer(app, ana), `k${i}`)).statusCode, 201);
  const over = await newKey(app, ana.id, bearer(app, ana));
  t.same([over.statusCode, over.json().code], [409, 'TOO_MANY_KEYS']);
  t.equal((await newKey(app, ana.id, bearer(app, bob))).statusCode, 403);
  t.equal((await app.inject({ method: 'GET', url: `/api/user/${ana.id}/keys`, headers: bearer(app, bob) })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${ana.id}/keys/1`, headers: bearer(app, bob) })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${bob.id}/keys/1`, headers: bearer(app, bob) })).statusCode, 404, "not bob's key");
  for (const payload of [{}, { name: '' }, { name: 'x', extra: 1 }]) {
    t.equal((await app.inject({ method: 'POST', url: `/api/user/${ana.id}/keys`, headers: bearer(app, ana), payload })).statusCode, 400);
  }
});
