// Configuration parsing, the persisted JWT key and the first administrator (SPEC §1).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, durationSeconds, parseConfig, projectRoot } from '../src/config';
import { resolveJwtSecret } from '../src/jwt-secret';
import { ensureAdmin } from '../src/services/bootstrap-admin';
import { verifyPassword } from '../src/services/passwords';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD, tempDir } from './helper';

t.test('defaults with an empty environment', async (t) => {
  t.same(parseConfig({}), {
    host: '127.0.0.1',
    port: 3000,
    databasePath: join(projectRoot, 'data', 'gateway.db'),
    jwtTtl: '12h',
    messagingApiUrl: 'https://graph.facebook.com/v23.0',
    messagingTimeoutMs: 10000,
    messagingAllowUnsigned: false,
    timezone: 'UTC',
    cookieSecure: false,
    trustProxy: false,
    logLevel: 'info',
    requestTimeoutMs: 30000,
  });
  t.equal(durationSeconds('12h'), 43200);
  t.equal(durationSeconds('90'), 90);
});

t.test('values are converted; empty means default', async (t) => {
  const config = parseConfig({ PORT: '8080', COOKIE_SECURE: 'true', TRUST_PROXY: '1', DATABASE_PATH: ':memory:', TIMEZONE: 'Europe/Berlin', HOST: '' });
  t.match(config, { port: 8080, cookieSecure: true, trustProxy: 1, databasePath: ':memory:', timezone: 'Europe/Berlin', host: '127.0.0.1' });
});

t.test('an invalid value stops with a message naming the variable', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /^Invalid PORT: .*"abc"/],
    [{ PORT: '70000' }, /^Invalid PORT: /],
    [{ JWT_SECRET: 'too-short' }, /^Invalid JWT_SECRET: /],
    [{ JWT_TTL: '12 hours' }, /^Invalid JWT_TTL: /],
    [{ COOKIE_SECURE: 'yes please' }, /^Invalid COOKIE_SECURE: /],
    [{ LOG_LEVEL: 'loud' }, /^Invalid LOG_LEVEL: /],
    [{ ADMIN_PASSWORD: 'short' }, /^Invalid ADMIN_PASSWORD: /],
    [{ TIMEZONE: 'Mars/Olympus' }, /^Invalid TIMEZONE: /],
    [{ MESSAGING_TIMEOUT_MS: '0' }, /^Invalid MESSAGING_TIMEOUT_MS: /],
    [{ ADMIN_EMAIL: 'root' }, /^Invalid ADMIN_EMAIL: /],
    [{ ADMIN_EMAIL: 'root @example.com' }, /^Invalid ADMIN_EMAIL: /],
    [{ ADMIN_EMAIL: `${'r'.repeat(250)}@x.io` }, /^Invalid ADMIN_EMAIL: /],
  ];
  for (const [env, message] of cases) {
    t.throws(() => parseConfig(env), { constructor: ConfigError, message }, JSON.stringify(env));
  }
});

t.test('the generated JWT key is written once (0600) and reused', async (t) => {
  const dir = tempDir(t);
  const database = join(dir, 'gateway.db');
  const first = resolveJwtSecret(undefined, database);
  const file = join(dir, 'jwt-secret');
  t.ok(first.length >= 32);
  t.equal(readFileSync(file, 'utf8'), first + '\n');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(resolveJwtSecret(undefined, database), first, 'reused on the next start');
  t.equal(resolveJwtSecret('given-secret-given-secret-given-secret', database), 'given-secret-given-secret-given-secret', 'JWT_SECRET wins');
  t.equal(readFileSync(file, 'utf8'), first + '\n', 'and the file is left alone');
  t.not(resolveJwtSecret(undefined, ':memory:'), resolveJwtSecret(undefined, ':memory:'), 'in memory: a fresh key each time');
});

t.test('sessions survive a restart with the generated key', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  const first = await buildTestApp(t, { databasePath, jwtSecret: undefined });
  const ana = await createUser(first.app, { email: 'ana@example.com' });
  const token = first.app.issueToken(ana);
  await first.app.close();
  const second = await buildTestApp(t, { databasePath, jwtSecret: undefined });
  const me = await second.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } });
  t.equal(me.statusCode, 200);
  t.equal(me.json().email, 'ana@example.com');
  writeFileSync(join(dir, 'jwt-secret'), 'a-different-key-a-different-key-a-different\n');
  const third = await buildTestApp(t, { databasePath, jwtSecret: undefined });
  t.equal((await third.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } })).statusCode, 401, 'another key refuses it');
});

t.test('first admin from ADMIN_EMAIL/ADMIN_PASSWORD, created once', async (t) => {
  const { app } = await buildTestApp(t);
  const now = new Date('2026-03-15T12:00:00.000Z');
  const created = await ensureAdmin(app.usersRepo, { email: 'Root@Example.com', password: 'root-password' }, now);
  t.same(created, { email: 'Root@Example.com', generatedPassword: undefined });
  const row = app.usersRepo.findByEmail('root@example.com')!;
  t.match(row, { role: 'ADMIN', isActive: true, createdAt: now.getTime() });
  t.ok(await verifyPassword(row.passwordHash, 'root-password'));
  t.equal(await ensureAdmin(app.usersRepo, { email: 'other@example.com', password: 'other-password' }, now), undefined, 'not on a restart');
  t.equal(await ensureAdmin(app.usersRepo, {}, now), undefined);
  t.equal(app.usersRepo.countAdmins(), 1);
  t.equal(app.usersRepo.list(10, 0).total, 1);
  const login = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'root@example.com', password: 'root-password' } });
  t.equal(login.statusCode, 200);
});

t.test('first admin without configuration: admin@localhost with a random password', async (t) => {
  const { app } = await buildTestApp(t);
  const created = await ensureAdmin(app.usersRepo, {}, new Date());
  t.equal(created?.email, 'admin@localhost');
  t.match(created?.generatedPassword, /^[\w-]{16}$/);
  const row = app.usersRepo.findByEmail('admin@localhost')!;
  t.equal(row.role, 'ADMIN');
  t.ok(await verifyPassword(row.passwordHash, created!.generatedPassword!));
  const other = await buildTestApp(t);
  const second = await ensureAdmin(other.app.usersRepo, {}, new Date());
  t.not(second?.generatedPassword, created?.generatedPassword, 'random on every fresh database');
  t.equal(await ensureAdmin(app.usersRepo, {}, new Date()), undefined, 'never a second one');
  t.equal(app.usersRepo.countAdmins(), 1);
});

t.test('an existing CLIENT with the admin e-mail is promoted, not duplicated', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'root@example.com', isActive: false });
  await ensureAdmin(app.usersRepo, { email: 'root@example.com', password: 'root-password' }, new Date());
  t.match(app.usersRepo.findByEmail('root@example.com'), { role: 'ADMIN', isActive: true, tokenVersion: 2 });
  t.equal(app.usersRepo.list(10, 0).total, 1);
});

t.test('one e-mail rule for ADMIN_EMAIL and the API: a domain without a dot is fine', async (t) => {
  t.equal(parseConfig({ ADMIN_EMAIL: 'root@localhost' }).adminEmail, 'root@localhost');
  const { app } = await buildTestApp(t);
  const auth = bearer(app, await createAdmin(app));
  const created = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'x@localhost', password: 'long-enough' } });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { email: 'x@localhost', role: 'CLIENT' });
  t.ok(app.usersRepo.findByEmail('x@localhost'));
  const renamed = await app.inject({ method: 'PUT', url: `/api/user/update/${created.json().id}`, headers: auth, payload: { email: 'admin@localhost' } });
  t.equal(renamed.statusCode, 200);
  t.equal(renamed.json().email, 'admin@localhost');
  const spaced = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'x y@localhost', password: 'long-enough' } });
  t.same(spaced.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: 'body/email must match format "email"' });
});

t.test('JWT_TTL is turned into seconds once: the token lifetime and the cookie Max-Age', async (t) => {
  const { app } = await buildTestApp(t, { jwtTtl: '2h' });
  t.equal(app.sessionSeconds, 7200);
  await createAdmin(app);
  const login = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'admin@example.com', password: PASSWORD } });
  t.equal(login.cookies[0]!.maxAge, 7200);
  const claims = JSON.parse(Buffer.from(login.cookies[0]!.value.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number };
  t.equal(claims.exp - claims.iat, 7200);
});
