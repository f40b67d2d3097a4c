// Security headers on every kind of answer (JSON, errors, text, the Swagger UI, the pages), and no caching of
// what an authenticated caller receives.
import { connect } from 'node:net';
import t from 'tap';
import { signBody } from '../src/webhooks/signature';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

type Headers = Record<string, string | string[] | number | undefined>;

/** CSP header -> { directive: [values] }. */
function directives(headers: Headers): Record<string, string[]> {
  const csp = String(headers['content-security-policy'] ?? '');
  return Object.fromEntries(csp.split(';').filter((d) => d.trim()).map((d) => {
    const [name = '', ...values] = d.trim().split(/\s+/);
    return [name, values];
  }));
}

const API_CSP = { 'default-src': ["'none'"], 'base-uri': ["'none'"], 'form-action': ["'none'"], 'frame-ancestors': ["'none'"] };

async function setup(t: { teardown(fn: () => unknown): void }) {
  const built = await buildTestApp(t, { messagingVerifyToken: 'verify-me', messagingAppSecret: 'headers-app-secret' });
  const admin = await createAdmin(built.app);
  return { ...built, admin, auth: bearer(built.app, admin) };
}

t.test('every answer refuses framing and sniffing; JSON and text answers get the strictest CSP', async (t) => {
  const { app, auth } = await setup(t);
  const cases: [string, { method?: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: string }, number][] = [
    ['health', { url: '/healthz' }, 200],
    ['JSON 404', { url: '/api/nothing-here' }, 404],
    ['400 validation error', { url: '/api/users?limit=abc', headers: auth }, 400],
    ['400 invalid JSON', { method: 'POST', url: '/api/login', headers: { 'content-type': 'application/json' }, payload: '{' }, 400],
    ['401', { url: '/api/me' }, 401],
    ['unroutable URL', { url: '/api/user/%zz' }, 400],
    ['webhook handshake', { url: '/api/messaging/webhook?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=c-42' }, 200],
    ['webhook handshake refused', { url: '/api/messaging/webhook?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1' }, 403],
  ];
  for (const [name, request, status] of cases) {
    const res = await app.inject({ method: request.method ?? 'GET', ...request });
    t.equal(res.statusCode, status, name);
    t.same(directives(res.headers), API_CSP, `${name}: CSP`);
    t.equal(res.headers['x-frame-options'], 'DENY', name);
    t.equal(res.headers['x-content-type-options'], 'nosniff', name);
  }
  const handshake = await app.inject({ url: '/api/messaging/webhook?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=c-42' });
  t.equal(handshake.body, 'c-42', 'the handshake still answers its challenge as it is');
  const notFound = await app.inject({ url: '/api/nothing-here' });
  for (const name of ['referrer-policy', 'cross-origin-opener-policy', 'strict-transport-security']) t.ok(notFound.headers[name], name);
});

t.test("the network's callbacks and the health probes are answered with the baseline headers only; every other answer keeps helmet's whole set", async (t) => {
  const { app, config } = await setup(t);
  const secret = config.messagingAppSecret!;
  const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
  const signed = { 'content-type': 'application/json', 'x-hub-signature-256': signBody(raw, secret) };
  const answers: [string, Awaited<ReturnType<typeof app.inject>>, number][] = [
    ['callback', await app.inject({ method: 'POST', url: '/api/messaging/webhook', headers: signed, payload: raw }), 200],
    ['callback with a wrong signature', await app.inject({ method: 'POST', url: '/api/messaging/webhook',
      headers: { ...signed, 'x-hub-signature-256': signBody(raw, 'another secret') }, payload: raw }), 401],
    ['handshake', await app.inject({ url: '/api/messaging/webhook?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=c-7' }), 200],
    ['liveness probe', await app.inject({ url: '/healthz' }), 200],
    ['readiness probe', await app.inject({ url: '/readyz' }), 200],
  ];
  for (const [name, res, status] of answers) {
    t.equal(res.statusCode, status, name);
    t.same(directives(res.headers), API_CSP, `${name}: CSP`);
    t.equal(res.headers['x-frame-options'], 'DENY', name);
    t.equal(res.headers['x-content-type-options'], 'nosniff', name);
    t.ok(res.headers['x-request-id'], `${name}: request id`);
    for (const header of ['strict-transport-security', 'referrer-policy', 'cross-origin-opener-policy']) t.notOk(res.headers[header], `${name}: no ${header}`);
  }
  // Every other route keeps the whole set.
  for (const url of ['/api/nothing-here', '/docs/json', '/admin/login']) {
    const res = await app.inject({ url });
    for (const header of ['strict-transport-security', 'referrer-policy', 'cross-origin-opener-policy']) t.ok(res.headers[header], `${url}: ${header}`);
  }
});

t.test('the Swagger UI gets a CSP it works under: its own files only, no inline script (inline styles only), no framing', async (t) => {
  const { app } = await setup(t);
  for (const url of ['/docs', '/docs/', '/docs/json', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css']) {
    const res = await app.inject({ url });
    t.equal(res.statusCode, 200, url);
    const csp = directives(res.headers);
    t.same(csp['frame-ancestors'], ["'none'"], url);
    t.same(csp['script-src'], ["'self'"], url);
    t.same(csp['script-src-attr'], ["'none'"], url);
    // Its syntax highlighter sets style attributes (a real browser logs a violation otherwise); styles run no code.
    t.same(csp['style-src'], ["'self'", "'unsafe-inline'"], url);
    t.same(csp['default-src'], ["'self'"], url);
    t.same(csp['connect-src'], ["'self'"], `${url}: the UI fetches /docs/json and tries requests on this origin`);
    t.notMatch(String(res.headers['content-security-policy']).replace("style-src 'self' 'unsafe-inline'", ''), /unsafe-|https:|upgrade-insecure/, url);
    t.equal(res.headers['x-frame-options'], 'DENY', url);
  }
  // What the policy allows is enough: the page loads only same-origin files and has no inline script or handler.
  const page = (await app.inject({ url: '/docs/' })).body;
  t.same(page.match(/<script[^>]*>/g), [
    '<script src="./static/swagger-ui-bundle.js" charset="UTF-8">',
    '<script src="./static/swagger-ui-standalone-preset.js" charset="UTF-8">',
    '<script src="./static/swagger-initializer.js" charset="UTF-8">',
  ]);
  t.notMatch(page, /<script>|\son\w+=|<style|style=|https?:\/\//);
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css', 'index.css']) {
    t.equal((await app.inject({ url: `/docs/static/${file}` })).statusCode, 200, file);
  }
  const initializer = (await app.inject({ url: '/docs/static/swagger-initializer.js' })).body;
  t.match(initializer, /"validatorUrl":null/, 'no call to the public validator (another site)');
});

t.test('the pages keep their own strict CSP and refuse framing', async (t) => {
  const { app, auth } = await setup(t);
  for (const [url, headers, status] of [['/admin/login', {}, 200], ['/admin', auth, 200], ['/admin', {}, 302], ['/admin/nope', auth, 404]] as const) {
    const res = await app.inject({ url, headers });
    t.equal(res.statusCode, status, url);
    t.same(directives(res.headers), {
      'default-src': ["'self'"], 'script-src': ["'self'"], 'script-src-attr': ["'none'"], 'style-src': ["'self'"],
      'img-src': ["'self'", 'data:'], 'media-src': ["'self'"], 'connect-src': ["'self'"], 'font-src': ["'self'"], 'form-action': ["'self'"],
      'frame-ancestors': ["'none'"], 'object-src': ["'none'"], 'base-uri': ["'self'"],
    }, url);
    t.equal(res.headers['x-frame-options'], 'DENY', url);
  }
});

t.test('a request Node answers itself (timeout, unparsable) carries the same framing and sniffing guards', async (t) => {
  const { app } = await buildTestApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n'));
    socket.on('data', (chunk) => { text += chunk.toString(); });
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
  t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(answer, /\r\nx-frame-options: DENY\r\n/);
  t.match(answer, /\r\nx-content-type-options: nosniff\r\n/);
  t.match(answer, /\r\ncontent-security-policy: default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n/);
});

t.test('answers to an authenticated caller, and the login that sets the cookie, are never cached', async (t) => {
  const { app, admin, auth } = await setup(t);
  const client = await createUser(app, { email: 'client@example.com' });
  const login = await app.inject({ method: 'POST', url: '/api/login', payload: { email: admin.email, password: PASSWORD } });
  t.equal(login.statusCode, 200);
  t.match(login.headers['set-cookie'], /^token=/);
  t.equal(login.headers['cache-control'], 'no-store', 'login');
  const cookie = { cookie: String(login.headers['set-cookie']).split(';')[0]! };

  const cases: [string, Record<string, string>, number][] = [
    ['/api/me', auth, 200],
    ['/api/me', cookie, 200],
    ['/api/users', auth, 200],
    [`/api/user/${client.id}`, auth, 200],
    [`/api/user/${client.id}/conversations`, auth, 200],
    [`/api/user/${client.id}/conversations`, bearer(app, client), 200],
    ['/api/users', bearer(app, client), 403],
    ['/api/me', bearer(app, client), 200],
    ['/admin', cookie, 200],
    [`/admin/user/${client.id}/conversation-thread`, cookie, 200],
  ];
  for (const [url, headers, status] of cases) {
    const res = await app.inject({ url, headers });
    t.equal(res.statusCode, status, url);
    t.equal(res.headers['cache-control'], 'no-store', `${url} (${status})`);
  }
  const logout = await app.inject({ method: 'POST', url: '/api/logout', headers: cookie });
  t.equal(logout.headers['cache-control'], 'no-store', 'logout clears the cookie: not cached either');

  // Nothing personal in these: the header is not blanket.
  for (const url of ['/healthz', '/api/me', '/admin/login']) {
    const res = await app.inject({ url });
    t.not(res.headers['cache-control'], 'no-store', url);
  }
  const wrong = await app.inject({ method: 'POST', url: '/api/login', payload: { email: admin.email, password: 'wrong password' } });
  t.equal(wrong.statusCode, 401);
  t.equal(wrong.headers['set-cookie'], undefined);
});
