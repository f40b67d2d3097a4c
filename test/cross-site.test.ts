// Cross-site requests: a state-changing request that acts with the session cookie is refused (403 CROSS_SITE_REQUEST)
// when a browser sent it from another site; same-origin pages, scripts without those headers and Bearer callers pass.
import t from 'tap';
import type { App } from '../src/app';
import { sendingApp } from './fixtures/sending';
import { envelope, inboxRows, textItem } from './fixtures/webhooks';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

const EVIL = 'https://evil.example';
const CROSS_SITE = {
  statusCode: 403, code: 'CROSS_SITE_REQUEST', error: 'Forbidden',
  message: 'A request from another site may not act with this gateway\'s session cookie; send it from the gateway\'s own pages or with an Authorization header',
};

const cookieOf = async (app: App, email: string) => {
  const res = await app.inject({ method: 'POST', url: '/api/login', payload: { email, password: PASSWORD } });
  return `token=${res.cookies.find((c) => c.name === 'token')!.value}`;
};

/** A multipart/form-data body as an HTML form with a file input sends it. */
function formWithFile() {
  const boundary = '----evil-form-boundary';
  const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`
    + '\u0089PNG\r\n\u001a\n0000\r\n' + `--${boundary}--\r\n`;
  return { payload: Buffer.from(payload, 'latin1'), type: `multipart/form-data; boundary=${boundary}` };
}

t.test('a cross-site form upload with the cookie: 403, nothing reaches the network', async (t) => {
  const ctx = await sendingApp(t);
  const cookie = await cookieOf(ctx.app, 'ana@example.com');
  const form = formWithFile();
  const upload = (headers: Record<string, string>) => ctx.app.inject({
    method: 'POST', url: '/api/media', payload: form.payload, headers: { 'content-type': form.type, ...headers },
  });
  const crossSiteHeaders: Record<string, string>[] = [{ cookie, origin: EVIL }, { cookie, origin: 'null' }, { cookie, 'sec-fetch-site': 'cross-site' }, { cookie, 'sec-fetch-site': 'same-site' }];
  for (const headers of crossSiteHeaders) {
    const res = await upload(headers);
    t.equal(res.statusCode, 403, JSON.stringify(headers));
    t.same(res.json(), CROSS_SITE);
  }
  t.equal(ctx.sandbox.requests.length, 0, 'nothing uploaded');
  // The gateway's own page (same origin), a script without browser headers, and a Bearer caller from anywhere pass.
  t.equal((await upload({ cookie, origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })).statusCode, 201, 'same origin');
  t.equal((await upload({ cookie })).statusCode, 201, 'neither header (curl)');
  t.equal((await upload({ cookie, 'sec-fetch-site': 'none' })).statusCode, 201, 'typed by the user');
  t.equal((await upload({ ...ctx.auth, origin: EVIL })).statusCode, 201, 'Bearer with a foreign Origin');
  t.equal(ctx.sandbox.requests.length, 4);
});

t.test('a cross-site form post to replay a webhook event or to log out everywhere: 403, nothing changed', async (t) => {
  const { app } = await buildTestApp(t, { messagingAppSecret: 'cross-site-secret' });
  await createAdmin(app, 'root@example.com');
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '900000000000001' });
  const id = Number(app.db.$client.prepare(`INSERT INTO webhook_events (received_at, raw_body, state, error, attempts, processed_at)
    VALUES (?, ?, 'dead', 'failure', 5, ?)`).run(Date.UTC(2026, 0, 1),
    envelope('900000000000001', { messages: [textItem('wamid.cross', '15551234567', 1767225600, 'hi')] }), Date.UTC(2026, 0, 2)).lastInsertRowid);
  const admin = await cookieOf(app, 'root@example.com');
  const client = await cookieOf(app, 'ana@example.com');
  const urlencoded = { 'content-type': 'application/x-www-form-urlencoded', origin: EVIL };

  const replay = await app.inject({ method: 'POST', url: `/api/webhook/events/${id}/replay`, payload: 'x=1', headers: { ...urlencoded, cookie: admin } });
  t.equal(replay.statusCode, 403);
  t.same(replay.json(), CROSS_SITE);
  t.match(inboxRows(app), [{ state: 'dead', attempts: 5 }], 'not replayed');

  const logout = await app.inject({ method: 'POST', url: '/api/logout?all=true', payload: 'x=1', headers: { ...urlencoded, cookie: client } });
  t.equal(logout.statusCode, 403);
  t.same(logout.json(), CROSS_SITE);
  t.equal(logout.headers['set-cookie'], undefined, 'the cookie is not cleared either');
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 1, 'no session ended');
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: { cookie: client, origin: EVIL } })).statusCode, 200, 'a GET is never refused');

  // From the gateway's own origin (as Fastify computes it behind no proxy) the same calls act.
  const same = await app.inject({ method: 'POST', url: '/api/logout?all=true', headers: { cookie: client, origin: 'http://localhost:80' } });
  t.equal(same.statusCode, 200);
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 2);
  const replayed = await app.inject({ method: 'POST', url: `/api/webhook/events/${id}/replay`, headers: { ...bearer(app, app.usersRepo.findByEmail('root@example.com')!), origin: EVIL } });
  t.equal(replayed.statusCode, 200, 'Bearer with a foreign Origin');
});

t.test('behind a trusted proxy the own origin is the forwarded scheme and host', async (t) => {
  const { app } = await buildTestApp(t, { trustProxy: ['127.0.0.1'] });
  const ana = await createUser(app, { email: 'ana@example.com' });
  const cookie = await cookieOf(app, 'ana@example.com');
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'gw.example.com', cookie };
  const logoutAll = (origin: string) => app.inject({ method: 'POST', url: '/api/logout?all=true', headers: { ...forwarded, origin } });
  t.equal((await logoutAll('http://gw.example.com')).statusCode, 403, 'the scheme counts');
  t.equal((await logoutAll('https://gw.example.com:8443')).statusCode, 403, 'so does the port');
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 1);
  t.equal((await logoutAll('https://GW.example.com')).statusCode, 200, 'the gateway\'s own origin');
  t.equal(app.usersRepo.findById(ana.id)!.tokenVersion, 2);
});
