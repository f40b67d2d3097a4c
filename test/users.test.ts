// User administration (SPEC §4): answers, errors and the database state after each call.
import t from 'tap';
import argon2 from 'argon2';
import type { App } from '../src/app';
import type { UserRow } from '../src/db/tables';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

const T0 = '2026-03-15T12:00:00.000Z';
const T1 = '2026-03-16T08:30:00.000Z';

/** App with a clock the test moves, and a logged-in admin. */
async function setup(t: { teardown(fn: () => unknown): void }) {
  let now = new Date(T0);
  const built = await buildTestApp(t, {}, { now: () => now });
  const admin = await createAdmin(built.app);
  return { ...built, admin, auth: bearer(built.app, admin), setNow: (iso: string) => { now = new Date(iso); } };
}

const userCount = (app: App) => app.usersRepo.list(1, 0).total;
const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });

function viewOf(row: UserRow, extra: Record<string, unknown> = {}) {
  return {
    id: row.id, email: row.email, sso_id: row.ssoId, role: row.role, is_active: row.isActive,
    messaging_phone_number_id: row.messagingPhoneNumberId, messaging_token_set: row.messagingToken !== null, messaging_token_last4: null,
    monthly_credits: row.monthlyCredits, messaging_rate: row.messagingRate, credits_used: 0, credits_remaining: row.monthlyCredits,
    created_at: new Date(row.createdAt).toISOString(), updated_at: new Date(row.updatedAt).toISOString(), ...extra,
  };
}

t.test('create: 201 with the user object; stored lower-cased, hashed, token kept (encrypted) but never answered', async (t) => {
  const { app, auth } = await setup(t);
  const res = await app.inject({
    method: 'POST', url: '/api/user/create', headers: auth,
    payload: { email: 'Ana@Example.com', password: 'ana-password-1', sso_id: 'ext-42', messaging_token: 'EAAG-secret-token', messaging_phone_number_id: '106540352242922', monthly_credits: 1000 },
  });
  t.equal(res.statusCode, 201);
  t.same(res.json(), {
    id: 2, email: 'ana@example.com', sso_id: 'ext-42', role: 'CLIENT', is_active: true,
    messaging_phone_number_id: '106540352242922', messaging_token_set: true, messaging_token_last4: 'oken',
    monthly_credits: 1000, messaging_rate: 80, credits_used: 0, credits_remaining: 1000, created_at: T0, updated_at: T0,
  });
  t.notMatch(res.body, /EAAG|password|hash/i);
  const row = app.usersRepo.findById(2)!;
  t.equal(row.email, 'ana@example.com');
  t.match(row.messagingToken, /^v1:/, 'stored sealed');
  t.equal(app.tokenCipher.open(row.messagingToken!), 'EAAG-secret-token');
  t.equal(row.tokenVersion, 1);
  t.match(row.passwordHash, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  t.ok(await argon2.verify(row.passwordHash, 'ana-password-1'));
});

t.test('create: defaults for the optional fields', async (t) => {
  const { app, auth } = await setup(t);
  const res = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'ben@example.com', password: 'ben-password' } });
  t.equal(res.statusCode, 201);
  t.same(res.json(), viewOf(app.usersRepo.findById(2)!));
  t.match(res.json(), { role: 'CLIENT', is_active: true, monthly_credits: 0, sso_id: null, messaging_token_set: false, messaging_phone_number_id: null });
  const admin = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'root@example.com', password: 'root-password', role: 'ADMIN', is_active: false } });
  t.equal(admin.statusCode, 201);
  t.match(app.usersRepo.findById(3), { role: 'ADMIN', isActive: false });
});

t.test('create: duplicate e-mail (any case) and phone number id are 409s and store nothing', async (t) => {
  const { app, auth } = await setup(t);
  await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '111' });
  const before = userCount(app);
  const email = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'ANA@example.com', password: 'whatever-1' } });
  t.equal(email.statusCode, 409);
  t.same(email.json(), err(409, 'EMAIL_TAKEN', 'Conflict', 'Another user has this e-mail address'));
  const phone = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload: { email: 'ben@example.com', password: 'whatever-1', messaging_phone_number_id: '111' } });
  t.equal(phone.statusCode, 409);
  t.same(phone.json(), err(409, 'PHONE_NUMBER_ID_TAKEN', 'Conflict', 'Another user has this messaging phone number id'));
  t.equal(userCount(app), before);
});

t.test('create: invalid fields are 400s naming the field', async (t) => {
  const { app, auth } = await setup(t);
  const base = { email: 'ana@example.com', password: 'long-enough' };
  const cases: [Record<string, unknown>, string][] = [
    [{ email: 'ana@example.com' }, 'body/password is required'],
    [{ password: 'long-enough' }, 'body/email is required'],
    [{ ...base, email: 'not-an-email' }, 'body/email must match format "email"'],
    [{ ...base, password: 'short-7' }, 'body/password must NOT have fewer than 8 characters'],
    [{ ...base, password: 'x'.repeat(257) }, 'body/password must NOT have more than 256 characters'],
    [{ ...base, role: 'ROOT' }, 'body/role must be equal to one of the allowed values'],
    [{ ...base, is_active: 'yes' }, 'body/is_active must be boolean'],
    [{ ...base, monthly_credits: -1 }, 'body/monthly_credits must be >= 0'],
    [{ ...base, monthly_credits: 1.5 }, 'body/monthly_credits must be integer'],
    [{ ...base, monthly_credits: '5' }, 'body/monthly_credits must be integer'],
    [{ ...base, messaging_rate: 0 }, 'body/messaging_rate must be >= 1'],
    [{ ...base, messaging_rate: 1001 }, 'body/messaging_rate must be <= 1000'],
    [{ ...base, messaging_phone_number_id: '+1 555' }, 'body/messaging_phone_number_id must match pattern "^[0-9]{1,32}$"'],
    [{ ...base, messaging_token: '' }, 'body/messaging_token must NOT have fewer than 1 characters'],
    [{ ...base, messaging_token: 'x'.repeat(4097) }, 'body/messaging_token must NOT have more than 4096 characters'],
    ...['EAAG…', 'EAAG token', ' EAAG', 'EAAG\t', 'EAAG\r\nX-Injected: 1', 'EAAG\u0000', 'EAAG\u007f', 'EAAGé'].map((token) =>
      [{ ...base, messaging_token: token }, 'body/messaging_token must match pattern "^[\\x21-\\x7E]{1,4096}$"'] as [Record<string, unknown>, string]),
    [{ ...base, credits: 5 }, 'body/credits is not an allowed property'],
  ];
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/user/create', headers: auth, payload });
    t.equal(res.statusCode, 400, message);
    t.same(res.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', message));
  }
  t.equal(userCount(app), 1, 'nothing was stored');
});

t.test('update: changes only the given fields', async (t) => {
  const { app, auth, setNow } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com', ssoId: 'ext-1', messagingToken: 'EAAG-1', messagingPhoneNumberId: '111', monthlyCredits: 5 });
  setNow(T1);
  const res = await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { monthly_credits: 50, is_active: false, messaging_phone_number_id: null, messaging_rate: 20 } });
  t.equal(res.statusCode, 200);
  const row = app.usersRepo.findById(ana.id)!;
  t.same(res.json(), viewOf(row));
  t.equal(row.messagingToken, ana.messagingToken, 'the token is left alone');
  t.equal(app.tokenCipher.open(row.messagingToken!), 'EAAG-1');
  t.match(row, { email: 'ana@example.com', ssoId: 'ext-1', messagingPhoneNumberId: null, monthlyCredits: 50, messagingRate: 20, isActive: false, tokenVersion: 1, passwordHash: ana.passwordHash });
  t.equal(res.json().created_at, T0);
  t.equal(res.json().updated_at, T1);
});

t.test('update: a new password ends the old sessions and the new one logs in', async (t) => {
  const { app, auth } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const oldSession = bearer(app, ana);
  const res = await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { password: 'a-brand-new-one' } });
  t.equal(res.statusCode, 200);
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 2);
  const me = await app.inject({ method: 'GET', url: '/api/me', headers: oldSession });
  t.equal(me.statusCode, 401);
  t.same(me.json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Session has ended; log in again'));
  const oldPassword = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ana@example.com', password: PASSWORD } });
  t.equal(oldPassword.statusCode, 401);
  const newPassword = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ana@example.com', password: 'a-brand-new-one' } });
  t.equal(newPassword.statusCode, 200);
});

t.test('update: empty, token-only and invalid bodies are 400s; nothing changes', async (t) => {
  const { app, auth } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const cases: [unknown, string][] = [
    [{}, 'body must NOT have fewer than 1 properties'],
    [{ token: 'x' }, 'body/token is not an allowed property'],
    [{ email: 'nope' }, 'body/email must match format "email"'],
    [{ password: 'short' }, 'body/password must NOT have fewer than 8 characters'],
    [{ role: 'client' }, 'body/role must be equal to one of the allowed values'],
    [{ messaging_token: 'EAAG…' }, 'body/messaging_token must match pattern "^[\\x21-\\x7E]{1,4096}$"'],
    [{ messaging_token: 'EAAG abc' }, 'body/messaging_token must match pattern "^[\\x21-\\x7E]{1,4096}$"'],
    [{ messaging_token: 'EAAG\nabc' }, 'body/messaging_token must match pattern "^[\\x21-\\x7E]{1,4096}$"'],
  ];
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: payload as object });
    t.equal(res.statusCode, 400, message);
    t.same(res.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', message));
  }
  t.same(app.usersRepo.findById(ana.id), ana);
});

t.test('update: 404 for an unknown user, 409 for taken e-mail or phone number id', async (t) => {
  const { app, auth } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '111' });
  const ben = await createUser(app, { email: 'ben@example.com' });
  const missing = await app.inject({ method: 'PUT', url: '/api/user/update/999', headers: auth, payload: { monthly_credits: 1 } });
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), err(404, 'USER_NOT_FOUND', 'Not Found', 'User not found'));
  const email = await app.inject({ method: 'PUT', url: `/api/user/update/${ben.id}`, headers: auth, payload: { email: 'ANA@example.com' } });
  t.equal(email.statusCode, 409);
  t.equal(email.json().code, 'EMAIL_TAKEN');
  const phone = await app.inject({ method: 'PUT', url: `/api/user/update/${ben.id}`, headers: auth, payload: { messaging_phone_number_id: '111' } });
  t.equal(phone.statusCode, 409);
  t.equal(phone.json().code, 'PHONE_NUMBER_ID_TAKEN');
  t.same(app.usersRepo.findById(ben.id), ben);
  const own = await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { email: 'ANA@EXAMPLE.COM', messaging_phone_number_id: '111' } });
  t.equal(own.statusCode, 200, 'keeping its own values is no conflict');
});

t.test('update: an admin cannot demote or disable itself', async (t) => {
  const { app, admin, auth } = await setup(t);
  for (const payload of [{ role: 'CLIENT' }, { is_active: false }]) {
    const res = await app.inject({ method: 'PUT', url: `/api/user/update/${admin.id}`, headers: auth, payload });
    t.equal(res.statusCode, 409);
    t.same(res.json(), err(409, 'CANNOT_DEMOTE_SELF', 'Conflict', 'You cannot remove your own ADMIN role or disable yourself'));
  }
  t.same(app.usersRepo.findById(admin.id), admin);
  const credits = await app.inject({ method: 'PUT', url: `/api/user/update/${admin.id}`, headers: auth, payload: { monthly_credits: 3, role: 'ADMIN' } });
  t.equal(credits.statusCode, 200);
});

t.test('delete: 204, the user and its data are gone, its sessions end', async (t) => {
  const { app, auth } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com', monthlyCredits: 5 });
  const anaSession = bearer(app, ana);
  app.creditsRepo.reserve(ana.id, '2026-03', 5);
  app.messagesRepo.insertOutbound({ userId: ana.id, to: '15551234567', type: 'text', text: 'Hi', payloadJson: '{}', createdAt: Date.now() });
  const res = await app.inject({ method: 'DELETE', url: `/api/user/delete/${ana.id}`, headers: auth });
  t.equal(res.statusCode, 204);
  t.equal(res.body, '');
  t.equal(app.usersRepo.findById(ana.id), undefined);
  const left = (table: string) => (app.db.$client.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).get(ana.id) as { n: number }).n;
  t.same([left('credit_usage'), left('conversations'), left('messages')], [0, 0, 0]);
  const me = await app.inject({ method: 'GET', url: '/api/me', headers: anaSession });
  t.equal(me.statusCode, 401);
  t.equal(me.json().code, 'UNAUTHORIZED');
  const again = await app.inject({ method: 'DELETE', url: `/api/user/delete/${ana.id}`, headers: auth });
  t.equal(again.statusCode, 404);
  t.same(again.json(), err(404, 'USER_NOT_FOUND', 'Not Found', 'User not found'));
});

t.test('delete: an admin cannot delete itself', async (t) => {
  const { app, admin, auth } = await setup(t);
  const res = await app.inject({ method: 'DELETE', url: `/api/user/delete/${admin.id}`, headers: auth });
  t.equal(res.statusCode, 409);
  t.same(res.json(), err(409, 'CANNOT_DELETE_SELF', 'Conflict', 'You cannot delete your own account'));
  t.ok(app.usersRepo.findById(admin.id));
});

t.test('list: pages in id order with the total', async (t) => {
  const { app, admin, auth } = await setup(t);
  const others = [];
  for (const name of ['ana', 'ben', 'cy']) others.push(await createUser(app, { email: `${name}@example.com` }));
  const all = await app.inject({ method: 'GET', url: '/api/users', headers: auth });
  t.equal(all.statusCode, 200);
  t.same(all.json(), { users: [admin, ...others].map((row) => viewOf(row)), total: 4 });
  const page = await app.inject({ method: 'GET', url: '/api/users?limit=2&offset=1', headers: auth });
  t.same(page.json(), { users: others.slice(0, 2).map((row) => viewOf(row)), total: 4 });
  const past = await app.inject({ method: 'GET', url: '/api/users?offset=10', headers: auth });
  t.same(past.json(), { users: [], total: 4 });
  const bad: [string, string][] = [
    ['limit=0', 'querystring/limit must be >= 1'],
    ['limit=201', 'querystring/limit must be <= 200'],
    ['offset=-1', 'querystring/offset must be >= 0'],
    ['limit=ten', 'querystring/limit must be integer'],
    ['page=2', 'querystring/page is not an allowed property'],
  ];
  for (const [query, message] of bad) {
    const res = await app.inject({ method: 'GET', url: `/api/users?${query}`, headers: auth });
    t.equal(res.statusCode, 400, query);
    t.same(res.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', message));
  }
});

t.test('read: 200 with this month\'s credits in TIMEZONE, 404 when unknown', async (t) => {
  // 23:30 UTC on 31 January is already February in Berlin.
  const now = new Date('2026-01-31T23:30:00.000Z');
  const { app } = await buildTestApp(t, { timezone: 'Europe/Berlin' }, { now: () => now });
  const admin = await createAdmin(app);
  const ana = await createUser(app, { email: 'ana@example.com', monthlyCredits: 10 });
  for (let i = 0; i < 4; i++) app.creditsRepo.reserve(ana.id, '2026-01', 10);
  for (let i = 0; i < 3; i++) app.creditsRepo.reserve(ana.id, '2026-02', 10);
  const res = await app.inject({ method: 'GET', url: `/api/user/${ana.id}`, headers: bearer(app, admin) });
  t.equal(res.statusCode, 200);
  t.same(res.json(), viewOf(ana, { credits_used: 3, credits_remaining: 7 }));
  const missing = await app.inject({ method: 'GET', url: '/api/user/999', headers: bearer(app, admin) });
  t.equal(missing.statusCode, 404);
  t.same(missing.json(), err(404, 'USER_NOT_FOUND', 'Not Found', 'User not found'));
});

t.test('credits_remaining never goes below zero when the allowance is lowered', async (t) => {
  const { app, auth } = await setup(t);
  const ana = await createUser(app, { email: 'ana@example.com', monthlyCredits: 5 });
  for (let i = 0; i < 4; i++) app.creditsRepo.reserve(ana.id, '2026-03', 5);
  const res = await app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { monthly_credits: 2 } });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { monthly_credits: 2, credits_used: 4, credits_remaining: 0 });
});
