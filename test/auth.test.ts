// Login, logout, /api/me, the login rate limit and the session rules of SPEC §3.
import t from 'tap';
import { FAILED_LOGIN_WINDOW_MS, MAX_FAILED_LOGINS } from '../src/plugins/login-throttle';
import { bearer, buildTestApp, createUser, PASSWORD } from './helper';
import type { App } from '../src/app';
import { checkCredentials } from '../src/services/login';
import { dummyPasswordHash, verifyPassword } from '../src/services/passwords';

const login = (app: App, email: string, password = PASSWORD, remoteAddress = '127.0.0.1') =>
  app.inject({ method: 'POST', url: '/api/login', payload: { email, password }, remoteAddress });

const INVALID = { statusCode: 401, code: 'INVALID_CREDENTIALS', error: 'Unauthorized', message: 'E-mail or password is wrong' };

function claimsOf(jwt: string): Record<string, unknown>[] {
  return jwt.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
}

t.test('login sets an HttpOnly SameSite=Lax session cookie that lives as long as the JWT', async (t) => {
  const { app } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const res = await login(app, 'ana@example.com');
  t.equal(res.statusCode, 200);
  t.same(res.json(), { message: 'Login success' });
  const setCookie = String(res.headers['set-cookie']);
  t.match(setCookie, /^token=[\w-]+\.[\w-]+\.[\w-]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
  const jwt = res.cookies[0]!.value;
  const [header, claims] = claimsOf(jwt);
  t.same(header, { alg: 'HS256', typ: 'JWT' });
  t.match(claims, { sub: String(ana.id), role: 'CLIENT', ver: 1 });
  t.equal(Number(claims!.exp) - Number(claims!.iat), 43200);

  const me = await app.inject({ method: 'GET', url: '/api/me', cookies: { token: jwt } });
  t.equal(me.statusCode, 200);
  t.equal(me.json().email, 'ana@example.com');
});

t.test('the cookie is Secure with COOKIE_SECURE and follows JWT_TTL', async (t) => {
  const { app } = await buildTestApp(t, { cookieSecure: true, jwtTtl: '30m' });
  await createUser(app, { email: 'ana@example.com' });
  const res = await login(app, 'ana@example.com');
  t.equal(res.statusCode, 200);
  t.match(String(res.headers['set-cookie']), /^token=[\w.-]+; Max-Age=1800; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  const [, claims] = claimsOf(res.cookies[0]!.value);
  t.equal(Number(claims!.exp) - Number(claims!.iat), 1800);
});

t.test('e-mail matching is case-insensitive', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'Ana@Example.com' });
  t.equal(app.usersRepo.findById(1)!.email, 'ana@example.com');
  const res = await login(app, 'ANA@example.COM');
  t.equal(res.statusCode, 200);
  t.same(res.json(), { message: 'Login success' });
});

t.test('unknown e-mail and wrong password get the same answer in comparable time', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com' });
  const unknown = await login(app, 'nobody@example.com');
  const wrong = await login(app, 'ana@example.com', 'wrong password');
  t.equal(unknown.statusCode, 401);
  t.same(unknown.json(), INVALID);
  t.equal(wrong.statusCode, 401);
  t.same(wrong.json(), INVALID);
  t.equal(unknown.headers['set-cookie'], undefined);
  t.equal(wrong.headers['set-cookie'], undefined);

  // Equal time by construction: both paths pay exactly one argon2 verification of a real hash
  // (measured without timing assertions: count the verifications and check what they were given).
  const verified: string[] = [];
  const countingVerify = async (hash: string, password: string) => {
    verified.push(hash);
    return verifyPassword(hash, password);
  };
  t.equal(await checkCredentials(app.usersRepo, 'nobody@example.com', 'wrong password', countingVerify), undefined);
  t.equal(await checkCredentials(app.usersRepo, 'ana@example.com', 'wrong password', countingVerify), undefined);
  t.equal(verified.length, 2);
  t.equal(verified[0], await dummyPasswordHash(), 'an unknown e-mail is verified against the dummy hash');
  t.match(verified[0], /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/, 'the dummy hash costs what a real one does');
  t.match(verified[1], /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
});

t.test('a disabled account is told so only after the right password', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com', isActive: false });
  const right = await login(app, 'ana@example.com');
  t.equal(right.statusCode, 403);
  t.same(right.json(), { statusCode: 403, code: 'ACCOUNT_DISABLED', error: 'Forbidden', message: 'This account is disabled' });
  t.equal(right.headers['set-cookie'], undefined);
  const wrong = await login(app, 'ana@example.com', 'wrong password');
  t.equal(wrong.statusCode, 401);
  t.same(wrong.json(), INVALID);
});

t.test('login bodies are validated', async (t) => {
  const { app } = await buildTestApp(t);
  const cases: [unknown, string][] = [
    [{ email: 'ana@example.com' }, 'body/password is required'],
    [{ password: PASSWORD }, 'body/email is required'],
    [{ email: 'ana@example.com', password: PASSWORD, remember: true }, 'body/remember is not an allowed property'],
    [{ email: 'ana@example.com', password: 42 }, 'body/password must be string'],
    [{ email: '', password: PASSWORD }, 'body/email must NOT have fewer than 1 characters'],
  ];
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/login', payload: payload as object });
    t.equal(res.statusCode, 400, message);
    t.same(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message });
  }
});

t.test('failed logins are limited per (client IP, e-mail) pair', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com' });
  await createUser(app, { email: 'ben@example.com' });
  for (let i = 0; i < MAX_FAILED_LOGINS; i++) {
    t.equal((await login(app, 'ana@example.com', 'wrong password')).statusCode, 401, `failure ${i + 1} is a 401`);
  }
  // Now even the right password is refused, whatever the e-mail's case.
  const limited = await login(app, 'ANA@example.com');
  t.equal(limited.statusCode, 429);
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= FAILED_LOGIN_WINDOW_MS / 1000, `Retry-After ${retryAfter}`);
  t.same(limited.json(), {
    statusCode: 429, code: 'TOO_MANY_LOGIN_ATTEMPTS', error: 'Too Many Requests',
    message: `Too many failed logins for this e-mail from your address; retry in ${retryAfter} s`,
  });
  t.equal(limited.headers['set-cookie'], undefined);

  // Other pairs are not affected: another account from the same address, the same account from another.
  t.equal((await login(app, 'ben@example.com', 'wrong password')).statusCode, 401);
  t.equal((await login(app, 'ben@example.com')).statusCode, 200);
  t.equal((await login(app, 'ana@example.com', PASSWORD, '192.0.2.7')).statusCode, 200);
});

t.test('successful logins are not counted', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com' });
  for (let i = 0; i < MAX_FAILED_LOGINS + 2; i++) t.equal((await login(app, 'ana@example.com')).statusCode, 200);
  for (let i = 0; i < MAX_FAILED_LOGINS - 1; i++) await login(app, 'ana@example.com', 'wrong password');
  t.equal((await login(app, 'ana@example.com')).statusCode, 200, 'one failure short of the limit');
});

t.test('parallel guesses cannot get past the limit before failures are counted', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com' });
  const answers = await Promise.all(Array.from({ length: 3 * MAX_FAILED_LOGINS }, () => login(app, 'ana@example.com', 'wrong password')));
  const statuses = answers.map((res) => res.statusCode);
  t.equal(statuses.filter((s) => s === 401).length, MAX_FAILED_LOGINS);
  t.equal(statuses.filter((s) => s === 429).length, 2 * MAX_FAILED_LOGINS);
});

t.test('logout clears the cookie, with or without a body', async (t) => {
  const { app } = await buildTestApp(t);
  const cleared = /^token=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/;
  const variants = [
    {},
    { headers: { 'content-type': 'application/json' }, payload: '' },
    { payload: {} },
    { payload: { token: 'not-even-a-jwt' } },
  ];
  for (const variant of variants) {
    const res = await app.inject({ method: 'POST', url: '/api/logout', ...variant });
    t.equal(res.statusCode, 200, JSON.stringify(variant));
    t.same(res.json(), { message: 'Logged out' });
    t.match(String(res.headers['set-cookie']), cleared);
  }
  const extra = await app.inject({ method: 'POST', url: '/api/logout', payload: { all: true } });
  t.equal(extra.statusCode, 400);
  t.same(extra.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: 'body/all is not an allowed property' });
});

t.test('GET /api/me answers the caller\'s user object, for any role', async (t) => {
  const now = new Date('2026-03-15T12:00:00.000Z');
  const { app } = await buildTestApp(t, {}, { now: () => now });
  const ana = await createUser(app, { email: 'ana@example.com', ssoId: 'ext-42', monthlyCredits: 100, messagingToken: 'EAAG-secret', messagingPhoneNumberId: '106540352242922' });
  app.creditsRepo.reserve(ana.id, '2026-03', 100);
  const res = await app.inject({ method: 'GET', url: '/api/me', headers: bearer(app, ana) });
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    id: ana.id, email: 'ana@example.com', sso_id: 'ext-42', role: 'CLIENT', is_active: true,
    messaging_phone_number_id: '106540352242922', messaging_token_set: true, messaging_token_last4: null,
    monthly_credits: 100, messaging_rate: 80, credits_used: 1, credits_remaining: 99,
    created_at: '2026-03-15T12:00:00.000Z', updated_at: '2026-03-15T12:00:00.000Z',
  });
  const anonymous = await app.inject({ method: 'GET', url: '/api/me' });
  t.equal(anonymous.statusCode, 401);
  t.same(anonymous.json(), { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Authentication required' });
});
