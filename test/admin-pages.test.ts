// The admin HTML pages (SPEC §8) through inject: who gets which page, escaping, security headers, links, empty states.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { projectRoot } from '../src/config';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { HOSTILE_TEXT, inbound, outbound, seedDemoInbox } from './fixtures/conversations';

const NOW = Date.parse('2026-11-21T15:00:00.000Z');

async function setup(t: { teardown(fn: () => unknown): void }, timezone = 'Europe/Lisbon') {
  const { app } = await buildTestApp(t, { timezone }, { now: () => new Date(NOW) });
  // The start-up pass first: the demo inbox holds a pending send older than the send budget.
  await app.ready();
  await app.settleInterrupted.run();
  const admin = await createAdmin(app);
  const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: '106540352242922' });
  const session = { cookie: `token=${app.issueToken(admin)}` };
  const page = (url: string, headers: Record<string, string> = session) => app.inject({ method: 'GET', url, headers });
  return { app, admin, shop, session, page };
}

const threadOf = (id: number, query = '') => `/admin/user/${id}/conversation-thread${query}`;
const isPage = (t: Test, res: LightMyRequestResponse, status: number, text: RegExp) => {
  t.equal(res.statusCode, status);
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  t.match(res.body, text);
};

t.test('without a valid admin session every page redirects to the login page, keeping the path', async (t) => {
  const { app, shop, page } = await setup(t);
  // A sent but unusable session (bad, expired, of a deleted user) says so; none at all says nothing.
  const cases: [string, Record<string, string>, string][] = [
    ['/admin', {}, ''],
    [threadOf(shop.id, '?type=text&filter=today'), {}, ''],
    ['/admin', { cookie: 'token=not-a-jwt' }, '&reason=ended'],
    ['/admin', { cookie: `token=${app.issueToken(shop)}x` }, '&reason=ended'],
  ];
  for (const [url, headers, reason] of cases) {
    const res = await page(url, headers);
    t.equal(res.statusCode, 302, url);
    t.equal(res.headers.location, `/admin/login?next=${encodeURIComponent(url)}${reason}`);
  }
  const admin2 = await createUser(app, { email: 'old-admin@example.com', role: 'ADMIN' });
  const session2 = { cookie: `token=${app.issueToken(admin2)}` };
  app.usersRepo.update(admin2.id, { isActive: false }, new Date(NOW));
  t.equal((await page('/admin', session2)).headers.location, '/admin/login?next=%2Fadmin&reason=disabled');
  app.usersRepo.delete(admin2.id);
  t.equal((await page('/admin', session2)).headers.location, '/admin/login?next=%2Fadmin&reason=ended');

  // The login page shows the fixed text of a known reason, nothing for none, and a 400 page for any other.
  const login = await page('/admin/login?next=%2Fadmin', {});
  isPage(t, login, 200, /<form id="login-form"/);
  t.notMatch(login.body, /role="status"/);
  // A link's extra parameters never keep the form from opening.
  isPage(t, await page('/admin/login?next=%2Fadmin&utm_source=mail', {}), 200, /<form id="login-form"/);
  isPage(t, await page('/admin/login?next=%2Fadmin&reason=disabled', {}), 200,
    /<p class="form-error" role="status">Your account has been disabled\. Another administrator can enable it again\.<\/p>/);
  isPage(t, await page('/admin/login?reason=ended', {}), 200, /role="status">Your session has ended: it expired, your password was changed or your account was deleted\.</);
  const hostile = await page('/admin/login?reason=%3Cscript%3Ealert(1)%3C%2Fscript%3E', {});
  isPage(t, hostile, 400, /“reason” must be one of: disabled, ended/);
  t.notMatch(hostile.body, /<script>alert/);
});

t.test('a logged-in CLIENT gets the 403 page; unknown users, ids and query values get 404 and 400 pages', async (t) => {
  const { app, shop, page } = await setup(t);
  isPage(t, await page('/admin', bearer(app, shop)), 403, /<h1>Administrators only<\/h1>[\s\S]*shop@example\.com, which is not an administrator/);
  const forbiddenPage = (await page('/admin', bearer(app, shop))).body;
  t.match(forbiddenPage, /<button type="button" class="button button-quiet" data-logout>Log out and log in as an administrator<\/button>/, 'a way out, not a link back to this 403');
  t.match(forbiddenPage, /<a class="button" href="\/inbox">Go to your inbox<\/a>/, 'and the way to its own pages');
  t.notMatch(forbiddenPage, /href="\/admin">Go to the users/);
  isPage(t, await page(threadOf(shop.id), { cookie: `token=${app.issueToken(shop)}` }), 403, /Administrators only/);
  isPage(t, await page(threadOf(999)), 404, /<h1>No such user<\/h1>[\s\S]*no user with id 999/);
  isPage(t, await page('/admin/nothing-here'), 404, /There is no page at \/admin\/nothing-here/);
  isPage(t, await page('/admin/user/abc/conversation-thread'), 400, /id must be a positive integer/);
  isPage(t, await page('/admin/user/1e3/conversation-thread'), 400, /id must be a positive integer/);
  isPage(t, await page(threadOf(shop.id, '?type=video2')), 400, /“type” must be one of: text, template, image/);
  isPage(t, await page(threadOf(shop.id, '?filter=tomorrow')), 400, /“filter” must be one of: today, yesterday/);
  isPage(t, await page(threadOf(shop.id, '?contact=%2B351')), 400, /“contact” must match pattern/);
  isPage(t, await page(threadOf(shop.id, '?page=2')), 400, /“page” is not a parameter of this page/);
  isPage(t, await page('/admin?offset=-1'), 400, /“offset” must be &gt;= 0/);
});

t.test('every value from a message, contact or template is escaped', async (t) => {
  const { app, shop, page } = await setup(t);
  inbound(app, shop.id, { from: '15551230001', name: `Eve"><script>alert(1)</script>`, at: NOW - 60_000, text: HOSTILE_TEXT,
    type: 'document', media: { id: '1', filename: `"><img src=x onerror=alert(2)>.pdf`, mime_type: 'application/pdf' } });
  outbound(app, shop.id, { to: '15551230001', at: NOW - 30_000, template: { name: 'promo', language: 'en', params: [`<b onmouseover="x()">bold</b>`, `'quote'`] },
    statuses: [['failed', NOW - 20_000, { code: 1, title: '<i>bad</i>', error_data: { details: `"><svg onload=alert(3)>` } }]] });
  const res = await page(threadOf(shop.id));
  t.equal(res.statusCode, 200);
  const html = res.body;
  t.notMatch(html, /<script>alert|<img src=x|<svg|<b onmouseover|<i>bad/, 'no hostile markup survives');
  t.notMatch(html, /<[^>]*\son\w+=/i, 'no event-handler attribute in any tag');
  t.match(html, '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;y&#39;)&quot;&gt; &quot;quoted&quot; &amp; &#39;single&#39;');
  t.match(html, 'Eve&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
  t.match(html, '&quot;&gt;&lt;img src=x onerror=alert(2)&gt;.pdf');
  t.match(html, '&lt;b onmouseover=&quot;x()&quot;&gt;bold&lt;/b&gt;');
  t.match(html, '&lt;i&gt;bad&lt;/i&gt; — &quot;&gt;&lt;svg onload=alert(3)&gt; (1)');
  t.same(html.match(/<script[^>]*>/g), ['<script src="/admin/static/admin.js" defer>', '<script src="/admin/static/thread-live.js" defer>'],
    'the scripts are static files (the page\'s own and the live thread\'s)');
});

t.test('security headers: a CSP without inline script or style on every page; /docs keeps working', async (t) => {
  const { app, shop, page } = await setup(t);
  for (const res of [await page('/admin/login', {}), await page('/admin'), await page(threadOf(shop.id)), await page(threadOf(999)),
    await page('/admin', {}), await page('/admin', bearer(app, shop))]) {
    const csp = String(res.headers['content-security-policy']);
    const directives = Object.fromEntries(csp.split(';').map((d) => { const [name, ...values] = d.trim().split(/\s+/); return [name, values]; }));
    t.same(directives['script-src'], ["'self'"], `script-src of a ${res.statusCode}`);
    t.same(directives['style-src'], ["'self'"]);
    t.same(directives['default-src'], ["'self'"]);
    t.same(directives['frame-ancestors'], ["'none'"]);
    t.notMatch(csp, /unsafe-inline|unsafe-eval|upgrade-insecure-requests/);
    t.equal(res.headers['x-content-type-options'], 'nosniff');
    t.ok(res.headers['x-frame-options']);
  }
  const docs = await app.inject({ method: 'GET', url: '/docs' });
  t.equal(docs.statusCode, 200, 'the Swagger UI is not under the pages CSP');
  const login = await page('/admin/login', {});
  t.not(docs.headers['content-security-policy'], login.headers['content-security-policy'], 'the Swagger UI has its own CSP (security-headers.test.ts)');
  t.same(login.body.match(/<script[^>]*>/g), ['<script src="/admin/static/login.js" defer>']);
  t.notMatch(login.body, / style=/);
});

t.test('static files are served from templates/static only', async (t) => {
  const { page } = await setup(t);
  const script = await page('/admin/static/login.js', {});
  t.equal(script.statusCode, 200);
  t.match(script.headers['content-type'], /javascript/);
  t.match((await page('/admin/static/admin.css', {})).headers['content-type'], /text\/css/);
  for (const url of ['/admin/static/../../package.json', '/admin/static/%2e%2e/%2e%2e/package.json', '/admin/static/../thread.eta']) {
    const res = await page(url, {});
    t.not(res.statusCode, 200, url);
    t.notMatch(res.body, /"dependencies"|<% /);
  }
});

t.test('the login script follows ?next= only to a page under /admin on this site', async (t) => {
  const { safeNext } = require(join(projectRoot, 'templates', 'static', 'login.js')) as { safeNext: (raw: unknown) => string };
  const cases: [unknown, string][] = [
    ['/admin', '/admin'],
    ['/admin/user/2/conversation-thread?type=text&filter=today', '/admin/user/2/conversation-thread?type=text&filter=today'],
    [null, '/admin'], ['', '/admin'],
    ['//evil.example/admin', '/admin'], ['https://evil.example/admin', '/admin'], ['/\\evil.example', '/admin'],
    ['/administrator', '/admin'], ['/admin/../api/users', '/admin'], ['/admin/%2e%2e/api/users', '/admin'],
    ['/admin\\..\\api', '/admin'], ['javascript:alert(1)', '/admin'], ['/admin//evil.example', '/admin//evil.example'],
  ];
  for (const [raw, expected] of cases) t.equal(safeNext(raw), expected, String(raw));
});

t.test('after logging in an ADMIN goes to /admin or ?next= under /admin or /inbox; a CLIENT to /inbox or ?next= under /inbox', async (t) => {
  const { safeNext } = require(join(projectRoot, 'templates', 'static', 'login.js')) as { safeNext: (raw: unknown, role?: string) => string };
  const cases: [unknown, string, string][] = [
    [null, 'ADMIN', '/admin'], [null, 'CLIENT', '/inbox'],
    ['/inbox?contact=351911111111', 'ADMIN', '/inbox?contact=351911111111'], ['/inbox?contact=351911111111', 'CLIENT', '/inbox?contact=351911111111'],
    ['/admin/user/2', 'CLIENT', '/inbox'], ['/admin', 'CLIENT', '/inbox'], ['/inboxes', 'CLIENT', '/inbox'],
    ['/inbox/../admin', 'CLIENT', '/inbox'], ['//evil.example/inbox', 'CLIENT', '/inbox'], ['https://evil.example/inbox', 'ADMIN', '/admin'],
  ];
  for (const [raw, role, expected] of cases) t.equal(safeNext(raw, role), expected, `${role} ${String(raw)}`);
});

t.test('the users page links every user to its thread', async (t) => {
  const { admin, shop, page } = await setup(t);
  const res = await page('/admin');
  isPage(t, res, 200, /<h1>Users<\/h1>/);
  t.match(res.body, `href="/admin/user/${admin.id}/conversation-thread"`);
  t.match(res.body, `href="/admin/user/${shop.id}/conversation-thread"`);
  t.match(res.body, /<code>106540352242922<\/code>/);
  t.match(res.body, /2 accounts · times in Europe\/Lisbon/);
  t.match(res.body, /id="logout"/);
});

t.test('the thread: contacts, bubbles, ticks, local times, template, attachments, links keeping the filters', async (t) => {
  const { app, shop, page } = await setup(t, 'Asia/Tokyo');
  seedDemoInbox(app, shop.id, NOW);
  const html = (await page(threadOf(shop.id))).body;
  t.equal(html.match(/class="contact[ "]/g)?.length, 4, 'four contacts');
  t.match(html, /class="contact contact-active" href="\/admin\/user\/2\/conversation-thread\?contact=351912345678" aria-current="page"/);
  t.equal(html.match(/class="bubble bubble-in/g)?.length, 6);
  t.equal(html.match(/class="bubble bubble-out/g)?.length, 5);
  t.same(html.match(/tick tick-\w+/g), ['tick tick-read', 'tick tick-delivered', 'tick tick-sent', 'tick tick-failed', 'tick tick-pending']);
  // 15:00 UTC is midnight in Tokyo: what came at 23:30 there was yesterday.
  t.match(html, /<h3 class="day"><span>Yesterday<\/span><\/h3>[\s\S]*<time title="Sat, 21 Nov 2026, 23:30:00 \(Asia\/Tokyo\)">23:30<\/time>/);
  t.match(html, /<strong>order_shipped<\/strong> <span class="muted small">en_US<\/span>[\s\S]*\{\{1\}\}<\/span> Ana[\s\S]*\{\{3\}\}<\/span> Tuesday/);
  t.match(html, /attachment-image[\s\S]*<strong>Photo<\/strong><span class="attachment-detail">image\/jpeg<\/span>[\s\S]*class="text caption">The box arrived a bit dented/);
  t.match(html, /<strong>Failed:<\/strong> Re-engagement message — More than 24 hours have passed since the customer last replied\. \(131047\)/);
  t.match(html, /<blockquote class="quote">Hi! Is my order on its way\?<\/blockquote>/);
  t.match(html, /Service window open until 23:20</); // 24 h after 23:20 yesterday: today, so no date
  t.match(html, 'href="/admin/user/2/conversation-thread?contact=351912345678&amp;filter=today"');
  t.match(html, 'href="/admin/user/2/conversation-thread?contact=351912345678&amp;type=template"');

  const filtered = (await page(threadOf(shop.id, '?type=template&filter=last_7_days'))).body;
  t.equal(filtered.match(/class="contact[ "]/g)?.length, 2, 'only contacts with a template in the period');
  t.match(filtered, 'href="/admin/user/2/conversation-thread?contact=351912345678&amp;type=template&amp;filter=today"');
  t.match(filtered, /class="chip chip-small chip-active" href="[^"]*type=template[^"]*" aria-current="true">template</);
  const ben = (await page(threadOf(shop.id, '?contact=14155550123'))).body;
  t.match(ben, /<h2>Ben Okafor<\/h2>/);
});

t.test('empty states say what is going on', async (t) => {
  const { app, shop, page } = await setup(t);
  const none = await createUser(app, { email: 'new@example.com' });
  t.match((await page(threadOf(none.id))).body, /No conversations yet[\s\S]*no messaging number configured/);
  t.match((await page(threadOf(shop.id))).body, /No conversations yet[\s\S]*phone number id 106540352242922/);
  inbound(app, shop.id, { from: '15551230001', at: NOW - 40 * 86_400_000, text: 'old' });
  const filtered = (await page(threadOf(shop.id, '?filter=today&type=image'))).body;
  t.match(filtered, /Nothing matches these filters[\s\S]*no image messages today/);
  t.match(filtered, /<a class="button" href="\/admin\/user\/2\/conversation-thread">Show all conversations<\/a>/);
  t.match((await page(threadOf(shop.id, '?contact=4915112345678'))).body, /Nothing with \+4915112345678[\s\S]*no messages all time with this contact/);
});
