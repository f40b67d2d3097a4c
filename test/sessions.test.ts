// Sessions: logout ends the presented JWT server-side (all=true: every JWT of the user); incomplete, aged, forged JWTs are refused.
import { createHmac } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { buildApp, type App } from '../src/app';
import { bearer, buildTestApp, createUser, PASSWORD } from './helper';

const login = async (app: App, email: string): Promise<string> => {
  const res = await app.inject({ method: 'POST', url: '/api/login', payload: { email, password: PASSWORD } });
  if (res.statusCode !== 200) throw new Error(`login answered ${res.statusCode}`);
  return res.cookies.find((c) => c.name === 'token')!.value;
};

type Form = 'header' | 'cookie';
const me = (app: App, jwt: string, form: Form = 'header') => app.inject({
  method: 'GET', url: '/api/me', ...(form === 'header' ? { headers: { authorization: `Bearer ${jwt}` } } : { cookies: { token: jwt } }),
});
const logout = (app: App, jwt?: string, query = '') =>
  app.inject({ method: 'POST', url: `/api/logout${query}`, ...(jwt ? { headers: { authorization: `Bearer ${jwt}` } } : {}) });

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const revokedRows = (app: App) => app.db.$client.prepare('SELECT jti, expires_at FROM revoked_sessions ORDER BY expires_at, jti').all();

const ENDED = { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Session has ended; log in again' };
const INVALID = { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Token is invalid or expired' };
const CLEARED = /^token=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/;

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT signed by hand: any header, any claims, HMAC with the given digest (none: no signature). */
function rawJwt(secret: string, claims: object, alg = 'HS256'): string {
  const signed = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}`;
  const digest = ({ HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' } as Record<string, string>)[alg];
  return `${signed}.${digest ? createHmac(digest, secret).update(signed).digest('base64url') : ''}`;
}

async function refused(t: Test, app: App, jwt: string, why: string, body = INVALID): Promise<void> {
  for (const form of ['header', 'cookie'] as const) {
    const res = await me(app, jwt, form);
    t.equal(res.statusCode, 401, `${why} (${form})`);
    t.same(res.json(), body, `${why} (${form})`);
  }
}

t.test('logout ends the presented session only, whichever way the JWT came', async (t) => {
  const { app } = await buildTestApp(t);
  await createUser(app, { email: 'ana@example.com' });
  const [byHeader, byCookie, byBody, other] = [await login(app, 'ana@example.com'), await login(app, 'ana@example.com'),
    await login(app, 'ana@example.com'), await login(app, 'ana@example.com')];

  const out = await logout(app, byHeader);
  t.equal(out.statusCode, 200);
  t.same(out.json(), { message: 'Logged out' });
  t.match(String(out.headers['set-cookie']), CLEARED);
  const claims = claimsOf(byHeader);
  t.same(revokedRows(app), [{ jti: claims.jti, expires_at: Number(claims.exp) * 1000 }], 'the jti is kept until the JWT expires');
  await refused(t, app, byHeader, 'the logged-out JWT', ENDED);

  t.equal((await app.inject({ method: 'POST', url: '/api/logout', cookies: { token: byCookie } })).statusCode, 200);
  await refused(t, app, byCookie, 'logged out with the cookie', ENDED);
  t.equal((await app.inject({ method: 'POST', url: '/api/logout', payload: { token: byBody } })).statusCode, 200);
  await refused(t, app, byBody, 'logged out with the body token', ENDED);

  for (const form of ['header', 'cookie'] as const) t.equal((await me(app, other, form)).statusCode, 200, `another session of the user stays (${form})`);
  t.equal((await logout(app, byHeader)).statusCode, 200, 'logging out twice is fine');
  t.equal(revokedRows(app).length, 3);
  const all = await logout(app, byHeader, '?all=true');
  t.equal(all.statusCode, 401, 'an ended session cannot end the others');
  t.same(all.json(), ENDED);
  t.equal((await me(app, other)).statusCode, 200);
});

t.test('logout with all=true ends every session of the user, and only of that user', async (t) => {
  const { app } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const ben = await createUser(app, { email: 'ben@example.com' });
  const sessions = [await login(app, 'ana@example.com'), await login(app, 'ana@example.com'), bearer(app, ana).authorization.slice(7)];
  const bens = await login(app, 'ben@example.com');

  const res = await logout(app, sessions[0], '?all=true');
  t.equal(res.statusCode, 200);
  t.same(res.json(), { message: 'Logged out of every session' });
  t.match(String(res.headers['set-cookie']), CLEARED);
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 2);
  for (const jwt of sessions) await refused(t, app, jwt, 'a session of ana', ENDED);
  t.equal((await me(app, bens)).statusCode, 200, "ben's session stays");
  t.equal(app.usersRepo.findById(ben.id)!.tokenVersion, 1);

  const again = await login(app, 'ana@example.com');
  t.equal((await me(app, again)).statusCode, 200, 'ana logs in again');
  t.equal((await logout(app, again, '?all=false')).statusCode, 200, 'all=false is a plain logout');
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 2);
  await refused(t, app, again, 'after the plain logout', ENDED);
});

t.test('logout without a valid session: 200 and a cleared cookie; all=true needs one', async (t) => {
  const { app } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const forged = rawJwt('another-secret-another-secret-0123456789', { sub: String(ana.id), role: 'ADMIN', ver: 1, jti: 'x', iat: 1, exp: 9999999999 });
  for (const jwt of [undefined, 'not-a-jwt', forged]) {
    const res = await logout(app, jwt);
    t.equal(res.statusCode, 200);
    t.match(String(res.headers['set-cookie']), CLEARED);
  }
  t.same(revokedRows(app), [], 'nothing is stored for a token we did not sign');

  const all = await logout(app, undefined, '?all=true');
  t.equal(all.statusCode, 401);
  t.same(all.json(), { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Authentication required' });
  t.match(String(all.headers['set-cookie']), CLEARED, 'the cookie is cleared all the same');
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 1);

  const badQueries: Array<[string, string]> = [
    ['?all=maybe', 'querystring/all must be boolean'], ['?everything=true', 'querystring/everything is not an allowed property'],
  ];
  for (const [query, message] of badQueries) {
    const res = await logout(app, undefined, query);
    t.equal(res.statusCode, 400, query);
    t.same(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message }, query);
  }
});

t.test('a JWT missing any of sub, ver, jti, iat, exp, or with a malformed one, is refused', async (t) => {
  const { app, config } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const now = Math.floor(Date.now() / 1000);
  const complete = { sub: String(ana.id), role: 'CLIENT', ver: 1, jti: 'jti-complete-1', epoch: ana.sessionEpoch, iat: now, exp: now + 3600 };
  t.equal((await me(app, rawJwt(config.jwtSecret!, complete))).statusCode, 200, 'the complete hand-signed JWT passes');
  t.equal((await me(app, app.jwt.sign({ sub: String(ana.id), role: 'CLIENT', ver: 1, jti: 'signed-by-the-app', epoch: ana.sessionEpoch }))).statusCode, 200);

  for (const claim of ['sub', 'ver', 'jti', 'iat', 'exp'] as const) {
    const { [claim]: _left, ...rest } = complete;
    await refused(t, app, rawJwt(config.jwtSecret!, rest), `without ${claim}`);
  }
  // An app-signed token of the old shape (no jti): sessions issued before logout could end them are refused.
  await refused(t, app, app.jwt.sign({ sub: String(ana.id), role: 'CLIENT', ver: 1 } as never), 'an app-signed JWT without jti');
  // Sessions issued before the session epoch existed: genuine, but ended (one new login after the upgrade).
  const { epoch: _epoch, ...withoutEpoch } = complete;
  await refused(t, app, rawJwt(config.jwtSecret!, withoutEpoch), 'a JWT without epoch (from before the upgrade)', ENDED);
  await refused(t, app, rawJwt(config.jwtSecret!, { ...complete, epoch: 'another-row' }), 'a JWT of another epoch', ENDED);

  const malformed: Array<[string, Record<string, unknown>]> = [
    ['sub 0', { sub: '0' }], ['sub not digits', { sub: '1 OR 1=1' }], ['sub a number', { sub: ana.id }],
    ['ver a string', { ver: '1' }], ['ver fractional', { ver: 1.5 }], ['jti empty', { jti: '' }], ['jti a number', { jti: 7 }],
    ['jti too long', { jti: 'x'.repeat(129) }], ['iat a string', { iat: String(now) }], ['exp a string', { exp: String(now + 60) }],
  ];
  for (const [why, change] of malformed) await refused(t, app, rawJwt(config.jwtSecret!, { ...complete, ...change }), why);
});

t.test('a JWT older than JWT_TTL is refused even when its exp lies further ahead; so is one from the future', async (t) => {
  const { app, config } = await buildTestApp(t, { jwtTtl: '1h' });
  const ana = await createUser(app, { email: 'ana@example.com' });
  const now = Math.floor(Date.now() / 1000);
  const base = { sub: String(ana.id), role: 'CLIENT', ver: 1, jti: 'jti-age', epoch: ana.sessionEpoch };
  const sign = (iat: number, exp: number) => rawJwt(config.jwtSecret!, { ...base, iat, exp });
  t.equal((await me(app, sign(now - 3600 + 60, now + 60))).statusCode, 200, 'a minute short of the lifetime');
  await refused(t, app, sign(now - 3600 - 5, now + 86_400), 'signed with a longer lifetime, older than JWT_TTL');
  await refused(t, app, sign(now - 7200, now + 3600), 'a two-hour-old token');
  await refused(t, app, sign(now + 3600, now + 7200), 'issued an hour from now');
  t.equal((await me(app, sign(now + 30, now + 3600))).statusCode, 200, 'a small clock step is tolerated');
});

t.test('expired, unsigned, HS512, wrong-key and tampered JWTs are refused', async (t) => {
  const { app, config } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const admin = await createUser(app, { email: 'root@example.com', role: 'ADMIN' });
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: String(ana.id), role: 'CLIENT', ver: 1, jti: 'jti-forms', epoch: ana.sessionEpoch, iat: now - 100, exp: now + 3600 };
  const secret = config.jwtSecret!;

  await refused(t, app, rawJwt(secret, { ...claims, exp: now - 1 }), 'expired');
  await refused(t, app, rawJwt(secret, claims, 'none'), 'alg none');
  await refused(t, app, rawJwt(secret, claims, 'HS512'), 'HS512 with the right key');
  await refused(t, app, rawJwt(secret, claims, 'HS384'), 'HS384 with the right key');
  await refused(t, app, rawJwt('not-the-key-not-the-key-not-the-key-012', claims), 'another key');

  const genuine = await login(app, 'ana@example.com');
  const [head, body, signature] = genuine.split('.') as [string, string, string];
  const middle = Math.floor(signature.length / 2);
  const flipped = signature.slice(0, middle) + (signature[middle] === 'A' ? 'B' : 'A') + signature.slice(middle + 1);
  await refused(t, app, `${head}.${body}.${flipped}`, 'a changed signature');
  const asAdmin = b64({ ...claimsOf(genuine), sub: String(admin.id), role: 'ADMIN' });
  await refused(t, app, `${head}.${asAdmin}.${signature}`, 'claims changed under the same signature');
  await refused(t, app, `${head}.${body}`, 'no signature part');
  t.equal((await me(app, genuine)).statusCode, 200, 'the genuine one still passes');
});

t.test('revocation rows go once their JWT has expired: on the next logout and at start-up', async (t) => {
  const first = await buildTestApp(t, { jwtTtl: '3s' });
  await createUser(first.app, { email: 'ana@example.com' });
  const early = await login(first.app, 'ana@example.com');
  await logout(first.app, early);
  t.equal(revokedRows(first.app).length, 1);
  await waitUntilExpired(early);

  // The next logout prunes before it stores its own row.
  const later = await login(first.app, 'ana@example.com');
  await logout(first.app, later);
  t.same(revokedRows(first.app), [{ jti: claimsOf(later).jti, expires_at: Number(claimsOf(later).exp) * 1000 }]);
  await waitUntilExpired(later);
  await first.app.close();

  // Start-up prunes what expired while the process was down.
  const second = await buildApp(first.config, { logStream: new PassThrough() });
  t.teardown(() => second.close());
  t.same(revokedRows(second), []);
});

/** Waits (no assertion on time) until the JWT's exp has passed on the clock the verification uses. */
async function waitUntilExpired(jwt: string): Promise<void> {
  const expiresAt = Number(claimsOf(jwt).exp) * 1000;
  while (Date.now() <= expiresAt) await new Promise((resolve) => setTimeout(resolve, Math.max(10, expiresAt - Date.now() + 5)));
}

t.test('a session does not survive into a restored past: a new ADMIN that gets the old CLIENT\'s id does not inherit its JWT', async (t) => {
  const first = await buildTestApp(t);
  const root = await createUser(first.app, { email: 'root@example.com', role: 'ADMIN' });
  await first.app.close();
  // The backup: the database file as it was, taken while the gateway was stopped.
  const dbFile = first.config.databasePath;
  const backup = `${dbFile}.backup`;
  copyFileSync(dbFile, backup);

  const second = await buildApp(first.config, { logStream: new PassThrough() });
  const ana = await createUser(second, { email: 'ana@example.com' });
  const oldSession = await login(second, 'ana@example.com');
  t.equal((await me(second, oldSession)).statusCode, 200);
  await second.close();

  // The restore: the file copied back (no WAL left after a clean close), then a new user gets the freed id.
  for (const suffix of ['-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true });
  copyFileSync(backup, dbFile);
  const third = await buildApp(first.config, { logStream: new PassThrough() });
  t.teardown(() => third.close());
  const boss = await createUser(third, { email: 'boss@example.com', role: 'ADMIN' });
  t.equal(boss.id, ana.id, 'the restored database hands out the same id again');
  t.equal(claimsOf(oldSession).sub, String(boss.id));
  t.equal(boss.tokenVersion, 1, 'the token version alone cannot tell them apart');
  for (const form of ['header', 'cookie'] as const) {
    const res = await me(third, oldSession, form);
    t.equal(res.statusCode, 401, form);
    t.same(res.json(), ENDED, form);
  }
  const users = await third.inject({ method: 'GET', url: '/api/users', headers: { authorization: `Bearer ${oldSession}` } });
  t.equal(users.statusCode, 401, 'no ADMIN call with the old CLIENT session');
  t.equal((await me(third, await login(third, 'boss@example.com'))).statusCode, 200, 'the new ADMIN\'s own session works');
  t.equal((await me(third, third.issueToken(third.usersRepo.findById(root.id)!))).statusCode, 200);
});
