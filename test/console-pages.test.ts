// The console (pages and endpoints) through inject: users list and search, a user's page, usage, password reset,
// the audit log (written with every administrative change, never a secret), operations, a user's own /inbox, the live
// thread's cursor and reply box, and media sent by an upload's id shown from the archive.
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../src/app';
import { auditDetails } from '../src/services/audit';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';
import { inbound, outbound } from './fixtures/conversations';
import { deliver, deliverOk, envelope, textItem } from './fixtures/webhooks';

// Afternoon in Lisbon, 21 November 2026.
const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const PHONE = '106540352242922';
const TOKEN = 'EAAG-very-secret-token-7Q2x';
const SECRET = 'console-app-secret';
const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });

async function setup(t: Test) {
  const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', messagingAppSecret: SECRET }, { now: () => new Date(NOW) });
  const admin = await createAdmin(app);
  const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: PHONE, messagingToken: TOKEN, monthlyCredits: 100 });
  const adminAuth = bearer(app, admin);
  const session = { cookie: `token=${app.issueToken(admin)}` };
  const page = (url: string, headers: Record<string, string> = session) => app.inject({ method: 'GET', url, headers });
  return { app, admin, shop, adminAuth, session, page };
}

const isPage = (t: Test, res: LightMyRequestResponse, status: number, text: RegExp) => {
  t.equal(res.statusCode, status);
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  t.match(res.body, text);
};
const auditRows = (app: App) => app.db.$client.prepare(`SELECT actor_user_id AS actor, actor_email AS actorEmail, action,
  target_user_id AS target, target_email AS targetEmail, details_json AS details, client_ip AS ip FROM audit_log ORDER BY id`).all() as
  { actor: number | null; actorEmail: string | null; action: string; target: number | null; targetEmail: string | null; details: string; ip: string | null }[];

t.test('users list: search by e-mail, credentials, credits and last activity; the create form; CLIENTs get the 403 page with a way to their inbox', async (t) => {
  const { app, shop, page } = await setup(t);
  await createUser(app, { email: 'other@sample.org' });
  inbound(app, shop.id, { from: '351911111111', at: NOW - 3_600_000, text: 'olá' });
  app.creditsRepo.reserve(shop.id, '2026-11', 100);

  const all = await page('/admin');
  isPage(t, all, 200, /3 accounts/);
  t.match(all.body, /<a class="user-link" href="\/admin\/user\/2"><strong>shop@example\.com<\/strong><\/a>/);
  t.match(all.body, /<td data-label="Credentials"><span><code>106540352242922<\/code> <span class="badge badge-ok">token set<\/span><\/span><\/td>/, 'number and token set');
  t.match(all.body, /<td data-label="Credentials"><span><span class="muted">no number<\/span> <span class="badge">no token<\/span><\/span><\/td>/);
  t.match(all.body, /<td data-label="Credits">1 \/ 100<\/td>/);
  t.match(all.body, /<td data-label="Last activity"><span title="Sat, 21 Nov 2026, 14:00:00 \(Europe\/Lisbon\)">14:00<\/span><\/td>/);
  t.match(all.body, /<td data-label="Last activity"><span class="muted">none<\/span><\/td>/);
  t.match(all.body, /<form class="api-form form-grid" data-method="POST" data-url="\/api\/user\/create" data-after="user" novalidate>/);
  t.match(all.body, /<label for="new-email">E-mail<\/label><input id="new-email" name="email"/, 'labelled fields');
  t.match(all.body, /<script src="\/admin\/static\/console\.js" defer><\/script>/);
  t.notMatch(all.body, new RegExp(TOKEN.slice(4)), 'no token on the page');

  const found = await page('/admin?q=SAMPLE');
  isPage(t, found, 200, /1 account with “SAMPLE” in the e-mail/);
  t.match(found.body, /other@sample\.org/);
  t.notMatch(found.body, /shop@example\.com/);
  isPage(t, await page('/admin?q=%25'), 200, /No user matches “%”/);
  isPage(t, await page(`/admin?q=${'x'.repeat(255)}`), 400, /“q” must NOT have more than 254 characters/);

  const client = await page('/admin', bearer(app, shop));
  isPage(t, client, 403, /<h1>Administrators only<\/h1>/);
  t.match(client.body, /<a class="button" href="\/inbox">Go to your inbox<\/a>/);
  t.match(client.body, /<a href="\/inbox">Inbox<\/a>/, 'its own navigation');
  for (const url of [`/admin/user/${shop.id}`, '/admin/audit', '/admin/operations']) isPage(t, await page(url, bearer(app, shop)), 403, /Administrators only/);
  for (const url of [`/admin/user/${shop.id}`, '/admin/audit', '/admin/operations']) {
    const res = await page(url, {});
    t.equal(res.statusCode, 302, url);
    t.equal(res.headers.location, `/admin/login?next=${encodeURIComponent(url)}`);
  }
});

t.test("a user's page: account form, token shown by its last 4 only, reset, usage, what deleting takes, 404 and 400 pages", async (t) => {
  const { app, shop, page } = await setup(t);
  inbound(app, shop.id, { from: '351911111111', at: NOW - 60_000 });
  outbound(app, shop.id, { to: '351911111111', at: NOW - 30_000, statuses: [['delivered', NOW - 20_000]] });
  const res = await page(`/admin/user/${shop.id}`);
  isPage(t, res, 200, /<h1>shop@example\.com<\/h1>/);
  t.match(res.body, /A token ending in <code>…7Q2x<\/code> is set\./);
  t.notMatch(res.body, /EAAG|very-secret/, 'never the token');
  t.match(res.body, /data-method="PUT" data-url="\/api\/user\/update\/2" data-changed-only data-after="reload"/);
  t.match(res.body, /<input id="monthly_credits" name="monthly_credits" type="number"[^>]* value="100"/);
  t.match(res.body, /<input id="messaging_token" name="messaging_token" type="password" autocomplete="off"/);
  t.match(res.body, /data-method="POST" data-url="\/api\/user\/2\/reset-password" data-after="password"/);
  t.match(res.body, /its <strong>1<\/strong> conversations,\s+<strong>2<\/strong> messages/);
  t.match(res.body, /<input id="confirm-email" data-ignore data-confirm="shop@example\.com"/);
  t.match(res.body, /<td data-outcome="delivered">1<\/td>/);
  t.match(res.body, /<strong>2026-11<\/strong>/);
  t.match(res.body, /href="\/admin\/user\/2\?month=2026-10#usage" rel="prev"/);

  const self = await page('/admin/user/1');
  t.match(self.body, /You cannot delete your own account\./);
  t.notMatch(self.body, /data-confirm=/);
  isPage(t, await page('/admin/user/99'), 404, /no user with id 99/);
  isPage(t, await page('/admin/user/2?month=2026-13'), 400, /“month” must match pattern/);
  isPage(t, await page('/admin/user/2?tab=x'), 400, /“tab” is not a parameter of this page/);
  const october = await page('/admin/user/2?month=2026-10');
  t.match(october.body, /href="\/admin\/user\/2#usage" rel="next"/, 'next month is this month');
});

t.test('the user object tells the last 4 characters of a long enough token, never the token', async (t) => {
  const { app, shop, adminAuth } = await setup(t);
  const short = await createUser(app, { email: 'short@example.com', messagingToken: 'abc12345' });
  const none = await createUser(app, { email: 'none@example.com' });
  const get = async (id: number) => (await app.inject({ method: 'GET', url: `/api/user/${id}`, headers: adminAuth })).json();
  t.equal((await get(shop.id)).messaging_token_last4, '7Q2x');
  t.match(await get(short.id), { messaging_token_set: true, messaging_token_last4: null });
  t.match(await get(none.id), { messaging_token_set: false, messaging_token_last4: null });
});

t.test('every administrative change is in the audit log, in the same write, with actor and client IP, never a secret', async (t) => {
  const { app, admin, adminAuth } = await setup(t);
  const call = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: { ...adminAuth, 'x-forwarded-for': '203.0.113.9' }, remoteAddress: '198.51.100.7', ...(payload ? { payload } : {}) });

  const created = await call('POST', '/api/user/create', { email: 'Ana@Example.com', password: 'ana-password-1', messaging_token: 'EAAG-first-token-abcd', monthly_credits: 10 });
  t.equal(created.statusCode, 201);
  const id = created.json().id as number;
  t.equal((await call('PUT', `/api/user/update/${id}`, { monthly_credits: 250, role: 'CLIENT', sso_id: 'ext-9' })).statusCode, 200);
  t.equal((await call('PUT', `/api/user/update/${id}`, { messaging_token: 'EAAG-second-token-wxyz', is_active: false })).statusCode, 200);
  t.equal((await call('PUT', `/api/user/update/${id}`, { password: 'another-password-2' })).statusCode, 200);
  t.equal((await call('PUT', `/api/user/update/${id}`, { messaging_token: null, is_active: true })).statusCode, 200);
  // A refused change writes nothing.
  t.equal((await call('PUT', `/api/user/update/${id}`, { email: 'admin@example.com' })).statusCode, 409);
  t.equal((await call('DELETE', `/api/user/delete/${id}`)).statusCode, 204);

  const who = { actor: admin.id, actorEmail: 'admin@example.com', target: id, targetEmail: 'ana@example.com', ip: '198.51.100.7' };
  t.same(auditRows(app), [
    { ...who, action: 'user.created', details: JSON.stringify({ role: 'CLIENT', is_active: true, monthly_credits: 10, messaging_phone_number_id: null, messaging_token_set: true }) },
    { ...who, action: 'user.updated', details: JSON.stringify({ fields: ['sso_id'], changes: { sso_id: { from: null, to: 'ext-9' } } }) },
    { ...who, action: 'user.credits_changed', details: '{"from":10,"to":250}' },
    { ...who, action: 'user.disabled', details: '{}' },
    { ...who, action: 'user.token_replaced', details: '{}' },
    { ...who, action: 'user.password_changed', details: '{"sessions_ended":true}' },
    { ...who, action: 'user.enabled', details: '{}' },
    { ...who, action: 'user.token_removed', details: '{}' },
    { ...who, action: 'user.deleted', details: '{"role":"CLIENT"}' },
  ]);
  const everything = JSON.stringify(app.db.$client.prepare('SELECT * FROM audit_log').all());
  t.notMatch(everything, /EAAG|token-abcd|wxyz|ana-password|another-password|argon2/, 'no secret stored');

  // The API answers the same entries, newest first, paged.
  const first = await app.inject({ method: 'GET', url: '/api/audit?limit=2', headers: adminAuth });
  t.equal(first.statusCode, 200);
  const body = first.json();
  t.equal(body.entries.length, 2);
  t.same(body.entries[0], {
    id: 9, at: '2026-11-21T15:00:00.000Z', actor: { user_id: admin.id, email: 'admin@example.com' }, action: 'user.deleted',
    target: { user_id: id, email: 'ana@example.com' }, details: { role: 'CLIENT' }, client_ip: '198.51.100.7',
  });
  t.equal(body.next_before_id, 8);
  const last = (await app.inject({ method: 'GET', url: '/api/audit?limit=50&before_id=2', headers: adminAuth })).json();
  t.same(last.entries.map((e: { action: string }) => e.action), ['user.created']);
  t.equal(last.next_before_id, null);
  for (const query of ['?limit=0', '?limit=201', '?before_id=0', '?before_id=x', '?page=1']) {
    const res = await app.inject({ method: 'GET', url: `/api/audit${query}`, headers: adminAuth });
    t.equal(res.statusCode, 400, query);
    t.equal(res.json().code, 'VALIDATION_ERROR', query);
  }

  const auditPage = await app.inject({ method: 'GET', url: '/admin/audit', headers: { cookie: `token=${app.issueToken(admin)}` } });
  isPage(t, auditPage, 200, /<h1>Audit log<\/h1>/);
  t.match(auditPage.body, /<code>user\.credits_changed<\/code><\/td>\s*<td data-label="User"><a href="\/admin\/user\/3">ana@example\.com<\/a><\/td>\s*<td data-label="Details" class="details">10 → 250<\/td>/);
  t.match(auditPage.body, /198\.51\.100\.7/);
});

t.test('recordAudit drops any detail named like a secret, at any depth, and keeps the names that only tell', async (t) => {
  t.same(auditDetails({
    password: 'p', new_password: 'p', messaging_token: 't', token: 't', api_key: 'k', key: 'k', signing_secret: 's', password_hash: 'h',
    authorization: 'Bearer x', jwt: 'j', messaging_token_set: true, key_id: 7, fields: ['messaging_token', 'password'],
    nested: { secret: 's', endpoint_id: 3, deeper: { session_token: 't', url: 'https://hooks.example/x' } },
  }), {
    messaging_token_set: true, key_id: 7, fields: ['messaging_token', 'password'],
    nested: { endpoint_id: 3, deeper: { url: 'https://hooks.example/x' } },
  });
});

t.test('audit, usage and reset refuse callers they are not for', async (t) => {
  const { app, shop } = await setup(t);
  const other = await createUser(app, { email: 'other@example.com' });
  const client = bearer(app, shop);
  t.same((await app.inject({ method: 'GET', url: '/api/audit', headers: client })).json(), err(403, 'FORBIDDEN', 'Forbidden', 'Your role may not do this'));
  t.same((await app.inject({ method: 'POST', url: `/api/user/${other.id}/reset-password`, headers: client })).json(), err(403, 'FORBIDDEN', 'Forbidden', 'Your role may not do this'));
  t.same((await app.inject({ method: 'GET', url: `/api/user/${other.id}/usage`, headers: client })).json(),
    err(403, 'FORBIDDEN', 'Forbidden', 'A user may read only its own usage'));
  t.equal((await app.inject({ method: 'GET', url: `/api/user/${shop.id}/usage`, headers: client })).statusCode, 200, 'its own');
  for (const url of ['/api/audit', `/api/user/${shop.id}/usage`]) {
    t.same((await app.inject({ method: 'GET', url })).json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Authentication required'), url);
  }
  t.equal(app.db.$client.prepare('SELECT count(*) FROM audit_log').pluck().get(), 0);
});

t.test('reset-password: a new password shown once, every old session ended, recorded without the password', async (t) => {
  const { app, admin, shop, adminAuth } = await setup(t);
  const oldSession = bearer(app, shop);
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: oldSession })).statusCode, 200);
  const res = await app.inject({ method: 'POST', url: `/api/user/${shop.id}/reset-password`, headers: adminAuth });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['cache-control'], 'no-store');
  const { password } = res.json();
  t.match(password, /^[A-Za-z0-9_-]{20}$/);
  t.same(Object.keys(res.json()), ['password']);
  t.same((await app.inject({ method: 'GET', url: '/api/me', headers: oldSession })).json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Session has ended; log in again'));
  const login = (pw: string) => app.inject({ method: 'POST', url: '/api/login', payload: { email: 'shop@example.com', password: pw } });
  t.equal((await login(PASSWORD)).statusCode, 401, 'the old password no longer works');
  t.equal((await login(password)).statusCode, 200, 'the new one does');
  t.same(auditRows(app), [{ actor: admin.id, actorEmail: 'admin@example.com', action: 'user.password_reset', target: shop.id, targetEmail: 'shop@example.com',
    details: '{"sessions_ended":true}', ip: '127.0.0.1' }]);
  t.notMatch(JSON.stringify(app.db.$client.prepare('SELECT * FROM audit_log').all()), new RegExp(password));

  const post = (url: string, extra: object) => app.inject({ method: 'POST', url, headers: adminAuth, ...extra });
  t.same((await post('/api/user/99/reset-password', {})).json(), err(404, 'USER_NOT_FOUND', 'Not Found', 'User not found'));
  t.equal((await post('/api/user/abc/reset-password', {})).statusCode, 400);
  t.same((await post(`/api/user/${shop.id}/reset-password`, { payload: { password: 'mine-please' } })).json(),
    err(400, 'VALIDATION_ERROR', 'Bad Request', 'body/password is not an allowed property'));
  t.equal((await post(`/api/user/${shop.id}/reset-password`, { payload: 'x', headers: { ...adminAuth, 'content-type': 'text/plain' } })).statusCode, 415);
  t.equal(app.db.$client.prepare('SELECT count(*) FROM audit_log').pluck().get(), 1, 'refused calls write nothing');
});

t.test('usage: a month of sends by outcome and error code, credits, pricing; bad months are 400', async (t) => {
  const { app, shop, adminAuth } = await setup(t);
  const to = '351911111111';
  const nov = Date.parse('2026-11-10T12:00:00.000Z');
  const utility = { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' };
  const service = { billable: false, pricing_model: 'PMP', type: 'free_customer_service', category: 'service' };
  outbound(app, shop.id, { to, at: nov, statuses: [['delivered', nov + 1000, undefined, utility]] });
  outbound(app, shop.id, { to, at: nov, statuses: [['sent', nov + 1000, undefined, service], ['read', nov + 2000]] });
  outbound(app, shop.id, { to, at: nov, statuses: [['failed', nov + 1000, { code: 131047, title: 'Re-engagement message' }]] });
  outbound(app, shop.id, { to, at: nov, failed: { code: 131026, title: 'Undeliverable' } });
  outbound(app, shop.id, { to, at: nov, failed: { code: 131026, title: 'Undeliverable' } });
  outbound(app, shop.id, { to, at: nov, accepted: false });
  // 31 October 23:30 in Lisbon (UTC+0 then) is October; 1 November 00:30 Lisbon is November.
  outbound(app, shop.id, { to, at: Date.parse('2026-10-31T23:30:00.000Z') });
  outbound(app, shop.id, { to, at: Date.parse('2026-11-01T00:30:00.000Z') });
  inbound(app, shop.id, { from: to, at: nov });
  app.creditsRepo.reserve(shop.id, '2026-11', 100);
  app.creditsRepo.reserve(shop.id, '2026-11', 100);

  const res = await app.inject({ method: 'GET', url: `/api/user/${shop.id}/usage`, headers: adminAuth });
  t.equal(res.statusCode, 200);
  t.same(res.json(), {
    user_id: shop.id, month: '2026-11', timezone: 'Europe/Lisbon', from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z',
    monthly_credits: 100, credits_used: 2, credits_remaining: 98,
    sends: {
      total: 7,
      by_status: { pending: 1, accepted: 1, sent: 0, delivered: 1, read: 1, failed: 3 },
      by_error_code: [{ code: '131026', count: 2 }, { code: '131047', count: 1 }],
    },
    pricing: [{ category: 'service', count: 1 }, { category: 'utility', count: 1 }],
  });
  const october = (await app.inject({ method: 'GET', url: `/api/user/${shop.id}/usage?month=2026-10`, headers: adminAuth })).json();
  t.match(october, { month: '2026-10', from: '2026-09-30T23:00:00.000Z', to: '2026-11-01T00:00:00.000Z', credits_used: 0, sends: { total: 1 } });
  for (const month of ['2026-13', '2026-1', 'november', '2026-11-01', '0001-01']) {
    const bad = await app.inject({ method: 'GET', url: `/api/user/${shop.id}/usage?month=${month}`, headers: adminAuth });
    t.equal(bad.statusCode, 400, month);
    t.match(bad.json(), { code: 'VALIDATION_ERROR', message: /^querystring\/month must match pattern/ }, month);
  }
  t.same((await app.inject({ method: 'GET', url: '/api/user/99/usage', headers: adminAuth })).json(), err(404, 'USER_NOT_FOUND', 'Not Found', 'User not found'));
});

t.test('operations: misrouted callbacks by number, failed and dead ones with notes and Replay; a replay is audited', async (t) => {
  const { app, admin, adminAuth, page } = await setup(t);
  const unknown = '999000111222';
  t.equal((await deliver(app, envelope(unknown, { messages: [textItem('wamid.lost.1', '15551234567', 1795000000, 'anyone?')] }), SECRET)).statusCode, 200);
  const dead = Number(app.db.$client.prepare(`INSERT INTO webhook_events (received_at, raw_body, state, error, attempts, processed_at)
    VALUES (?, ?, 'dead', ?, 5, ?)`).run(NOW - 60_000, envelope(PHONE, { messages: [] }), 'entry[0]: <b>disk</b> said no', NOW - 30_000).lastInsertRowid);

  const res = await page('/admin/operations');
  isPage(t, res, 200, /<h1>Operations<\/h1>/);
  t.match(res.body, /<td data-label="Phone number id"><span><code>999000111222<\/code> <\/span><\/td>\s*<td data-label="Carried">1 messages, 0 statuses<\/td>/);
  t.equal(res.body.match(/data-label="Carried"/g)?.length, 1, 'the dead callback is listed once, with the failed and dead ones');
  // Once a user has the number, the row says so: Replay applies the callback to that user.
  const late = await createUser(app, { email: 'late@example.com', messagingPhoneNumberId: unknown });
  t.match((await page('/admin/operations')).body, new RegExp(`now <a href="/admin/user/${late.id}">late@example\\.com</a>'s: Replay applies it`));
  t.match(res.body, /<pre class="notes" data-notes>entry\[0\]: &lt;b&gt;disk&lt;\/b&gt; said no<\/pre>/, 'notes escaped');
  t.match(res.body, new RegExp(`data-url="/api/webhook/events/${dead}/replay" data-after="replay"`));
  t.match(res.body, /1 dead\./);

  const replayed = await app.inject({ method: 'POST', url: `/api/webhook/events/${dead}/replay`, headers: adminAuth });
  t.equal(replayed.statusCode, 200);
  t.same(auditRows(app).map((r) => [r.action, r.actor, r.target, JSON.parse(r.details)]),
    [['webhook_event.replayed', admin.id, null, { webhook_event_id: dead, state: 'processed', attempts: 6 }]]);
  t.match((await page('/admin/operations')).body, /None\. Every stored callback was processed\./);
});

t.test("/inbox: a signed-in user's own conversations, credits and usage; never another user's", async (t) => {
  const { app, shop, page } = await setup(t);
  const other = await createUser(app, { email: 'other@example.com', messagingPhoneNumberId: '777' });
  inbound(app, shop.id, { from: '351911111111', at: NOW - 60_000, name: 'Ana Lima', text: 'shop question' });
  inbound(app, other.id, { from: '351922222222', at: NOW - 60_000, name: 'Rui Costa', text: 'other question' });
  app.creditsRepo.reserve(shop.id, '2026-11', 100);
  const mine = { cookie: `token=${app.issueToken(shop)}` };

  const res = await page('/inbox', mine);
  isPage(t, res, 200, /<h1>shop@example\.com<\/h1>/);
  t.match(res.body, /Your inbox · <a href="\/inbox\/usage">1 of 100 credits used this month, 99 left<\/a>/);
  t.match(res.body, /shop question/);
  t.notMatch(res.body, /other question|Rui Costa/);
  t.match(res.body, /href="\/inbox\?contact=351911111111"/, 'links stay under /inbox');
  t.notMatch(res.body, /\/admin\/user\//);
  t.match(res.body, /<a href="\/inbox" aria-current="page">Inbox<\/a>/);
  t.match(res.headers['content-security-policy'], /script-src 'self'/);
  isPage(t, await page('/inbox?contact=351922222222', mine), 200, /Nothing with \+351922222222/);
  isPage(t, await page('/inbox?type=video2', mine), 400, /“type” must be one of/);

  const usage = await page('/inbox/usage', mine);
  isPage(t, usage, 200, /<h1>Usage<\/h1>/);
  t.match(usage.body, /<strong>1<\/strong> of 100 credits used · 99 left/);
  isPage(t, await page('/inbox/usage?month=2026-00', mine), 400, /“month” must match pattern/);

  const anonymous = await page('/inbox?type=text', {});
  t.equal(anonymous.statusCode, 302);
  t.equal(anonymous.headers.location, '/admin/login?next=%2Finbox%3Ftype%3Dtext');
  const ended = await page('/inbox', { cookie: 'token=nope' });
  t.equal(ended.headers.location, '/admin/login?next=%2Finbox&reason=ended');
});

t.test('the thread page follows the event stream: its cursor, the pinned page to re-read and the scripts; the reply box only on the own inbox', async (t) => {
  const { app, shop, page } = await setup(t);
  inbound(app, shop.id, { from: '351911111111', at: NOW - 3_600_000, name: 'Ana Lima', text: 'shop question' });
  inbound(app, shop.id, { from: '351933333333', at: NOW - 2 * 86_400_000, name: 'Old Friend', text: 'long ago' });
  // Events the page is already past: the live script starts after the last one.
  await deliverOk(app, envelope(PHONE, { messages: [textItem('wamid.live.1', '351944444444', Math.floor((NOW - 7_200_000) / 1000), 'earlier')] }), SECRET);
  const after = app.eventsRepo.lastSeq(shop.id);
  t.ok(after > 0, 'the callback wrote events');
  const mine = { cookie: `token=${app.issueToken(shop)}` };

  // The administrator's view: live, no reply box (the conversation is not its own).
  const admin = await page(`/admin/user/${shop.id}/conversation-thread`);
  isPage(t, admin, 200, /shop question/);
  t.match(admin.body, new RegExp(`<div class="inbox" data-live-user="${shop.id}" data-live-after="${after}" data-live-href="/admin/user/${shop.id}/conversation-thread\\?contact=351911111111">`),
    'the cursor, and this page with its conversation pinned (a message from another contact must not switch it)');
  t.match(admin.body, /<p class="live-status" id="live-status" role="status" hidden><\/p>/);
  t.match(admin.body, /<script src="\/admin\/static\/thread-live\.js" defer><\/script>/);
  t.notMatch(admin.body, /thread-reply\.js|id="reply"/, 'no reply box for an administrator reading another user');

  // The user's own inbox: live, and a reply box with the window's time left, the cost and the credits left.
  const open = await page('/inbox', mine);
  isPage(t, open, 200, /shop question/);
  t.match(open.body, new RegExp(`data-live-user="${shop.id}" data-live-after="${after}" data-live-href="/inbox\\?contact=351911111111"`));
  t.match(open.body, /<script src="\/admin\/static\/thread-live\.js" defer><\/script>\s*<script src="\/admin\/static\/thread-reply\.js" defer><\/script>/);
  const contactId = app.db.$client.prepare("SELECT id FROM contacts WHERE wa_id = '351911111111'").pluck().get();
  t.match(open.body, new RegExp(`<form class="reply" id="reply" data-contact-id="${contactId}" data-mode="text" data-left-ms="${23 * 3_600_000}" data-credits-left="100" novalidate aria-label="Reply to Ana Lima">`));
  t.match(open.body, /<p class="reply-window small" id="reply-window">Free text: the service window is open, 23 h 00 min left<\/p>/);
  t.match(open.body, /<div class="reply-text">\s*<label for="reply-body" class="sr-only">Message<\/label>/);
  t.match(open.body, /<fieldset class="reply-template" hidden>/);
  t.match(open.body, /<p class="reply-cost small muted" id="reply-cost">Costs 1 credit · 100 credits left this month<\/p>/);
  t.match(open.body, /<button type="button" class="button button-quiet" id="reply-again" hidden>Send again<\/button>/);

  // A conversation whose window closed: a template instead, with labelled fields.
  const closed = await page('/inbox?contact=351933333333', mine);
  t.match(closed.body, /data-mode="template" data-left-ms="0"/);
  t.match(closed.body, /The service window is closed: send an approved template/);
  t.match(closed.body, /<div class="reply-text" hidden>/);
  t.match(closed.body, /<fieldset class="reply-template">/);
  t.match(closed.body, /<label for="reply-template-name">Template name<\/label><input id="reply-template-name" name="template_name"/);
  t.match(closed.body, /<label for="reply-template-language">Language<\/label><input id="reply-template-language" name="template_language" value="en_US"/);

  // No conversation: nothing to reply to, but the page still follows the stream (the first message appears).
  const empty = await page('/inbox?contact=351900000000', mine);
  isPage(t, empty, 200, /Nothing with \+351900000000/);
  t.match(empty.body, /data-live-user="2"/);
  t.notMatch(empty.body, /id="reply"/);
});

t.test('what was sent is visible: media sent by an upload\'s id joins the archive once accepted and shows the archived copy; a link shows as a link', async (t) => {
  const { app, shop, page } = await setup(t);
  inbound(app, shop.id, { from: '351911111111', at: NOW - 3_600_000, text: 'send me a picture' });
  const sendImage = (media: object, at: number) => app.writer.writeNow(() => {
    const id = app.messagesRepo.insertOutbound({ userId: shop.id, to: '351911111111', type: 'image', text: null, payloadJson: '{}', createdAt: at, mediaJson: JSON.stringify(media) });
    app.messagesRepo.markAccepted(id, `wamid.img.${id}`, '351911111111', at + 1);
    return id;
  });
  const byLink = sendImage({ id: null, link: 'https://example.com/parcel.jpg', caption: null }, NOW - 120_000);
  const byId = sendImage({ id: '424242', link: null, caption: 'Your parcel' }, NOW - 60_000);
  const queued = app.db.$client.prepare('SELECT message_id AS id, state FROM media_downloads ORDER BY message_id').all();
  t.same(queued, [{ id: byId, state: 'pending' }], 'only the one sent by id is fetched back for the archive');

  const before = await page(`/admin/user/${shop.id}/conversation-thread`);
  t.match(before.body, new RegExp(`<article class="bubble bubble-out" data-type="image" id="m${byId}">[\\s\\S]*?<p class="media-pending">Not in the archive yet</p>`));
  t.match(before.body, new RegExp(`id="m${byLink}">[\\s\\S]*?<a class="media-link-sent" href="https://example.com/parcel.jpg" target="_blank" rel="noopener noreferrer">Sent by link: https://example.com/parcel.jpg</a>`));
  t.notMatch(before.body, /<img[^>]*example\.com/, 'a link is never loaded by the page (its CSP allows only this origin)');

  app.writer.writeNow(() => app.mediaRepo.stored(byId, 'image/png', 70, NOW));
  const listed = await app.inject({ method: 'GET', url: `/api/message/${byId}`, headers: { authorization: `Bearer ${app.issueToken(shop)}` } });
  t.same(listed.json().media, { id: '424242', mime_type: 'image/png', sha256: null, filename: null, link: null, caption: 'Your parcel', stored: true, url: `/api/media/${byId}`, error: null });
  const after = await page(`/admin/user/${shop.id}/conversation-thread`);
  t.match(after.body, new RegExp(`id="m${byId}">[\\s\\S]*?<img class="media media-image" src="/api/media/${byId}" alt="Photo" loading="lazy">`));
  const events = app.db.$client.prepare("SELECT type FROM events WHERE user_id = ? AND message_id = ? ORDER BY seq").pluck().all(shop.id, byId);
  t.same(events, ['message.sent', 'message.status', 'message.media'], 'the live thread hears of the archived copy');
});
