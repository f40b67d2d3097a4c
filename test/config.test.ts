// Configuration parsing, the persisted JWT key and the first administrator (SPEC §1).
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, dotenvWarning, durationSeconds, parseConfig, projectRoot } from '../src/config';
import { resolveJwtSecret } from '../src/support/jwt-secret';
import { ensureAdmin } from '../src/services/bootstrap-admin';
import { verifyPassword } from '../src/services/passwords';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD, tempDir } from './helper';

t.test('defaults with an empty environment', async (t) => {
  t.same(parseConfig({}), {
    host: '127.0.0.1',
    port: 3000,
    databasePath: join(projectRoot, 'data', 'gateway.db'),
    jwtTtl: '12h',
    messagingApiUrl: 'https://graph.facebook.com/v25.0',
    messagingTimeoutMs: 10000,
    messagingAllowUnsigned: false,
    timezone: 'UTC',
    cookieSecure: false,
    trustProxy: false,
    logLevel: 'info',
    requestTimeoutMs: 30000,
    retentionWebhookEventsDays: 30,
    retentionMessagesDays: 0,
    retentionEventsDays: 7,
    eventEndpointsAllowHttp: false,
    eventEndpointsAllowedCidrs: [],
    eventStreamsPerUser: 5,
    mediaMaxBytes: 104857600,
    storageMinFreeMb: 64,
    sendWaitMs: 10000,
  });
  t.equal(durationSeconds('12h'), 43200);
  t.equal(durationSeconds('90'), 90);
});

t.test('values are converted; empty means default', async (t) => {
  const config = parseConfig({ PORT: '8080', COOKIE_SECURE: 'true', TRUST_PROXY: '1', DATABASE_PATH: ':memory:', TIMEZONE: 'Europe/Berlin', HOST: '',
    RETENTION_MESSAGES_DAYS: '90', RETENTION_WEBHOOK_EVENTS_DAYS: '0', MEDIA_ARCHIVE_MAX_BYTES: '1000000', STORAGE_MIN_FREE_MB: '0' });
  t.match(config, { mediaArchiveMaxBytes: 1000000, storageMinFreeMb: 0, retentionMessagesDays: 90, retentionWebhookEventsDays: 0, port: 8080, cookieSecure: true, trustProxy: 1, databasePath: ':memory:', timezone: 'Europe/Berlin', host: '127.0.0.1' });
});

t.test('an invalid value stops with a message naming the variable', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /^Invalid PORT: .*"abc"/],
    [{ PORT: '70000' }, /^Invalid PORT: /],
    [{ MEDIA_ARCHIVE_MAX_BYTES: '0' }, /^Invalid MEDIA_ARCHIVE_MAX_BYTES: /],
    [{ STORAGE_MIN_FREE_MB: '-1' }, /^Invalid STORAGE_MIN_FREE_MB: /],
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
    [{ RETENTION_WEBHOOK_EVENTS_DAYS: '-1' }, /^Invalid RETENTION_WEBHOOK_EVENTS_DAYS: .*"-1"/],
    [{ RETENTION_WEBHOOK_EVENTS_DAYS: '100000' }, /^Invalid RETENTION_WEBHOOK_EVENTS_DAYS: /],
    [{ RETENTION_MESSAGES_DAYS: 'forever' }, /^Invalid RETENTION_MESSAGES_DAYS: /],
    [{ MEDIA_MAX_BYTES: '0' }, /^Invalid MEDIA_MAX_BYTES: .*"0"/],
    [{ MEDIA_MAX_BYTES: '10MB' }, /^Invalid MEDIA_MAX_BYTES: /],
    [{ EVENT_STREAMS_PER_USER: '0' }, /^Invalid EVENT_STREAMS_PER_USER: .*"0"/],
    [{ EVENT_STREAMS_PER_USER: 'many' }, /^Invalid EVENT_STREAMS_PER_USER: /],
    [{ EVENT_STREAMS_PER_USER: '10001' }, /^Invalid EVENT_STREAMS_PER_USER: /],
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

/** The ConfigError `env` causes (a failed test when there is none). */
function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

t.test('TRUST_PROXY: false, a hop count, or a list of proxy addresses/CIDRs', async (t) => {
  const cases: [string | undefined, unknown][] = [
    [undefined, false], ['', false], ['false', false], ['FALSE', false], ['0', false],
    ['1', 1], [' 2 ', 2], ['100', 100],
    ['127.0.0.1', ['127.0.0.1']],
    ['127.0.0.1, 10.0.0.0/8 ,::1,fd00::/8', ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']],
    ['loopback,uniquelocal', ['loopback', 'uniquelocal']],
    ['192.168.1.0/24,', ['192.168.1.0/24']],
    ['::ffff:10.0.0.1/128', ['::ffff:10.0.0.1/128']],
  ];
  for (const [value, expected] of cases) t.same(parseConfig({ TRUST_PROXY: value }).trustProxy, expected, JSON.stringify(value));
});

t.test('TRUST_PROXY=true is refused with what to use instead', async (t) => {
  for (const value of ['true', 'TRUE', ' True ']) {
    const error = configErrorOf({ TRUST_PROXY: value });
    t.match(error.message, /^Invalid TRUST_PROXY: "true" would trust any X-Forwarded-For header a client sends/, value);
    t.match(error.message, /TRUST_PROXY=1 behind one reverse proxy/, 'names the hop count form');
    t.match(error.message, /TRUST_PROXY=127\.0\.0\.1,10\.0\.0\.0\/8/, 'and the address list form');
  }
});

t.test('TRUST_PROXY: hop counts out of range and bad addresses are refused, naming the bad entry', async (t) => {
  const cases: [string, RegExp][] = [
    ['101', /^Invalid TRUST_PROXY: a hop count must be between 1 and 100$/],
    ['-1', /^Invalid TRUST_PROXY: "-1" is not an IP address or CIDR/],
    ['1.5', /^Invalid TRUST_PROXY: "1\.5" is not an IP address or CIDR/],
    ['yes', /^Invalid TRUST_PROXY: "yes" is not an IP address or CIDR/],
    ['10.0.0.0/33', /^Invalid TRUST_PROXY: "10\.0\.0\.0\/33" is not an IP address or CIDR/],
    ['::1/129', /"::1\/129" is not/],
    ['10.0.0.0/', /"10\.0\.0\.0\/" is not/],
    ['10.0.0.0/8/8', /"10\.0\.0\.0\/8\/8" is not/],
    ['10.0.0.0/x', /"10\.0\.0\.0\/x" is not/],
    ['300.1.1.1', /"300\.1\.1\.1" is not/],
    ['127.0.0.1,proxy.internal', /"proxy\.internal" is not/],
    ['127.0.0.1 10.0.0.1', /"127\.0\.0\.1 10\.0\.0\.1" is not/],
    [',', /^Invalid TRUST_PROXY: "," is not an IP address or CIDR; use false, a hop count, or a comma-separated list of proxy addresses$/],
  ];
  for (const [value, message] of cases) {
    t.throws(() => parseConfig({ TRUST_PROXY: value }), { constructor: ConfigError, message }, value);
  }
});

t.test('an invalid secret is named but its value never echoed', async (t) => {
  const cases: Record<string, string> = {
    JWT_SECRET: 'jwt-secret-value-too-short',
    ADMIN_PASSWORD: 'pw-val',
    MESSAGING_TOKEN_KEY: 'token-key-value-too-short',
  };
  for (const [name, value] of Object.entries(cases)) {
    const error = configErrorOf({ [name]: value });
    t.match(error.message, new RegExp(`^Invalid ${name}: `), name);
    t.notOk(error.message.includes(value), `${name}: the value is not in the message`);
    t.notOk(error.message.includes(value.slice(0, 6)), `${name}: nor a part of it`);
  }
  // The control: a variable that is not secret is echoed, so the check above can fail.
  t.match(configErrorOf({ PORT: 'port-value' }).message, /port-value/);
  t.equal(parseConfig({ MESSAGING_TOKEN_KEY: 'k'.repeat(32) }).messagingTokenKey, 'k'.repeat(32));
});

t.test('COOKIE_SECURE defaults to true whenever TRUST_PROXY is set; an explicit false still wins', async (t) => {
  t.equal(parseConfig({}).cookieSecure, false, 'no proxy: off');
  t.equal(parseConfig({ TRUST_PROXY: 'false' }).cookieSecure, false);
  t.equal(parseConfig({ TRUST_PROXY: '1' }).cookieSecure, true, 'a hop count');
  t.equal(parseConfig({ TRUST_PROXY: '10.0.0.0/8' }).cookieSecure, true, 'a list');
  t.equal(parseConfig({ TRUST_PROXY: '1', COOKIE_SECURE: 'false' }).cookieSecure, false, 'explicit false wins');
  t.equal(parseConfig({ TRUST_PROXY: '1', COOKIE_SECURE: '' }).cookieSecure, true, 'empty means default');
  t.equal(parseConfig({ COOKIE_SECURE: 'true' }).cookieSecure, true);
});

t.test('COOKIE_SECURE=false while a request arrives over HTTPS through the trusted proxy: warned once in the log', async (t) => {
  const WARNING = 'COOKIE_SECURE=false but this request came over HTTPS';
  const count = (text: string) => text.split(WARNING).length - 1;
  const { app, logs } = await buildTestApp(t, { trustProxy: ['127.0.0.1'], cookieSecure: false });
  await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-proto': 'http' } });
  t.equal(count(logs()), 0, 'plain HTTP: nothing to say');
  for (let i = 0; i < 3; i++) await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
  t.equal(count(logs()), 1, 'once, not per request');
  t.match(logs(), /"level":40[^\n]*COOKIE_SECURE=false but this request came over HTTPS/);

  const secure = await buildTestApp(t, { trustProxy: ['127.0.0.1'], cookieSecure: true });
  await secure.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
  t.equal(count(secure.logs()), 0, 'with COOKIE_SECURE on: no warning');
  const untrusted = await buildTestApp(t, { cookieSecure: false });
  await untrusted.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
  t.equal(count(untrusted.logs()), 0, 'X-Forwarded-Proto from an untrusted peer is not believed');
});

t.test('a .env readable by other users is warned about; one only its owner reads is not', async (t) => {
  const dir = tempDir(t);
  t.equal(dotenvWarning(dir), undefined, 'no .env');
  const file = join(dir, '.env');
  writeFileSync(file, 'JWT_SECRET=x\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  t.equal(dotenvWarning(dir), undefined, 'mode 600');
  chmodSync(file, 0o644);
  t.equal(dotenvWarning(dir), `${file} is readable by other users (mode 644); it may hold secrets: chmod 600 it`);
  chmodSync(file, 0o640);
  t.match(dotenvWarning(dir), /mode 640/, 'the group counts too');
});

t.test('e-mail addresses refuse control characters: ADMIN_EMAIL and the API alike', async (t) => {
  for (const bad of ['ro\u0000ot@example.com', 'root@exa\u0007mple.com', 'root\u007f@example.com', 'root@example.com\u0085', 'ro\u001bot@example.com']) {
    t.throws(() => parseConfig({ ADMIN_EMAIL: bad }), /^Invalid ADMIN_EMAIL: /, JSON.stringify(bad));
  }
  t.equal(parseConfig({ ADMIN_EMAIL: 'rené@exämple.com' }).adminEmail, 'rené@exämple.com', 'other non-ASCII letters are fine');
  const { app } = await buildTestApp(t);
  const admin = await createAdmin(app);
  const res = await app.inject({ method: 'POST', url: '/api/user/create', headers: bearer(app, admin),
    payload: { email: 'ana\u0000@example.com', password: 'long enough password' } });
  t.equal(res.statusCode, 400);
  t.match(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', message: /^body\/email / });
  t.equal(app.usersRepo.list(10, 0).total, 1, 'nobody created');
});
