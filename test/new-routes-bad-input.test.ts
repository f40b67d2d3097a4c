// Bad inputs on the routes added for media, sends of every type and webhook administration: each a clean 4xx in
// the one error shape, nothing sent, charged or stored.
import { request } from 'node:http';
import t from 'tap';
import { ConfigError, parseConfig } from '../src/config';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { PHONE_ID, sendingApp, TOKEN } from './fixtures/sending';

const shape = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const { app } = await buildTestApp(t, { messagingAppSecret: 'secret' });
  const admin = await createAdmin(app);
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: PHONE_ID, messagingToken: TOKEN, monthlyCredits: 5 });
  return { app, admin, ana };
}

t.test('sends: a body over 100 KB is 413, another content type 415; nothing stored or charged', async (t) => {
  const { app, ana } = await setup(t);
  const big = { to: '15551234567', type: 'contacts', contacts: Array.from({ length: 2000 }, (_, i) => ({ name: { formatted_name: `Contact number ${i} with a long name` } })) };
  for (const url of ['/api/message/send', '/api/message/send2']) {
    const tooLarge = await app.inject({ method: 'POST', url, headers: { ...bearer(app, ana), 'content-type': 'application/json' }, payload: JSON.stringify(big) });
    t.equal(tooLarge.statusCode, 413, `${url}: 413`);
    t.match(tooLarge.json(), shape(413, 'PAYLOAD_TOO_LARGE'));
    const text = await app.inject({ method: 'POST', url, headers: { ...bearer(app, ana), 'content-type': 'text/plain' }, payload: 'to=15551234567' });
    t.equal(text.statusCode, 415, `${url}: 415`);
    t.match(text.json(), shape(415, 'UNSUPPORTED_MEDIA_TYPE'));
  }
  t.equal(app.db.$client.prepare('SELECT count(*) FROM messages').pluck().get(), 0, 'nothing stored');
  t.equal(app.creditsRepo.used(ana.id, new Date().toISOString().slice(0, 7)), 0, 'nothing charged');
});

t.test('GET /api/media/{id}: ids that are not positive integers are 400 naming the parameter', async (t) => {
  const { app, admin } = await setup(t);
  for (const id of ['0', '-1', '1.5', '1e3', '01', 'abc', '9007199254740993']) {
    const res = await app.inject({ url: `/api/media/${id}`, headers: bearer(app, admin) });
    t.equal(res.statusCode, 400, id);
    t.match(res.json(), { ...shape(400, 'VALIDATION_ERROR'), message: /id/ }, id);
  }
});

t.test('POST /api/media: broken multipart is a clean 4xx and stores nothing at the network', async (t) => {
  const { app, sandbox, auth } = await sendingApp(t);
  const cases: [string, string, string][] = [
    ['no boundary', 'multipart/form-data', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n--x--\r\n'],
    ['no disposition', 'multipart/form-data; boundary=x', '--x\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x--\r\n'],
  ];
  for (const [name, type, payload] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/media', headers: { ...auth, 'content-type': type }, payload });
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `${name}: ${res.statusCode}`);
    t.match(res.json(), { statusCode: res.statusCode, code: String, error: String, message: String }, name);
  }
  t.equal(sandbox.media.get('1'), undefined, 'no media stored at the network');
});

/** POSTs `body` over a real socket with its exact Content-Length, then ends: the HTTP request is whole, the multipart is not. */
function postRaw(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

t.test('POST /api/media: a body cut off before its closing boundary is 400, and nothing reaches the network', async (t) => {
  const { app, sandbox, auth, logs } = await sendingApp(t);
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const headers = { ...auth, 'content-type': 'multipart/form-data; boundary=cut' };
  const head = '--cut\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n';
  const cases: [string, Buffer][] = [
    ['a few file bytes, then the end', Buffer.from(`${head}hello`)],
    // Enough to be streaming to the network when the body ends.
    ['300 KiB of file bytes, then the end', Buffer.concat([Buffer.from(head), Buffer.alloc(300 * 1024, 'a')])],
    ['the file and half a closing boundary', Buffer.from(`${head}hello\r\n--cu`)],
    ['no file bytes at all', Buffer.from(head)],
    ['inside the part headers', Buffer.from('--cut\r\nContent-Disposition: form-data; name="file"; filena')],
  ];
  for (const [name, body] of cases) {
    const res = await postRaw(`${base}/api/media`, headers, body);
    t.equal(res.status, 400, name);
    t.match(res.json, shape(400, 'BAD_REQUEST'), name);
  }
  t.same(sandbox.requests.filter((r) => r.path.endsWith('/media')), [], 'no upload completed at the network');
  t.notMatch(logs(), /media upload to the messaging network failed/, 'not taken for a network failure');

  const whole = Buffer.from(`${head}hello\r\n--cut--\r\n`);
  const res = await postRaw(`${base}/api/media`, headers, whole);
  t.equal(res.status, 201, 'the same upload, whole, then goes through');
  t.match(res.json, { id: String, mime_type: 'text/plain', file_size: 5 });
  t.equal(sandbox.requests.filter((r) => r.path.endsWith('/media')).length, 1, 'only that one reached the network');
});

t.test('new admin and media routes refuse an ended session and a disabled admin', async (t) => {
  const { app, admin } = await setup(t);
  const headers = bearer(app, admin);
  const other = await createAdmin(app, 'other@example.com');
  t.equal((await app.inject({ method: 'POST', url: '/api/logout', headers })).statusCode, 200);
  for (const url of ['/api/webhook/events', '/metrics', '/api/media/1']) {
    const res = await app.inject({ url, headers });
    t.same(res.json(), { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Session has ended; log in again' }, `${url}: ended`);
  }
  app.db.$client.prepare('UPDATE users SET is_active = 0 WHERE id = ?').run(other.id);
  for (const url of ['/api/webhook/events', '/metrics']) {
    const res = await app.inject({ url, headers: bearer(app, other) });
    t.match(res.json(), shape(403, 'ACCOUNT_DISABLED'), `${url}: disabled`);
  }
});

t.test('replay: another content type is 415, a body over 100 KB 413', async (t) => {
  const { app, admin } = await setup(t);
  const url = '/api/webhook/events/1/replay';
  const text = await app.inject({ method: 'POST', url, headers: { ...bearer(app, admin), 'content-type': 'text/plain' }, payload: 'again' });
  t.match(text.json(), shape(415, 'UNSUPPORTED_MEDIA_TYPE'));
  const big = await app.inject({ method: 'POST', url, headers: { ...bearer(app, admin), 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(200_000) }) });
  t.match(big.json(), shape(413, 'PAYLOAD_TOO_LARGE'));
});

t.test('REQUEST_TIMEOUT_MS and MESSAGING_ALLOW_UNSIGNED refuse bad values naming the variable', async (t) => {
  for (const [env, message] of [
    [{ REQUEST_TIMEOUT_MS: 'abc' }, /^Invalid REQUEST_TIMEOUT_MS: /],
    [{ REQUEST_TIMEOUT_MS: '500' }, /^Invalid REQUEST_TIMEOUT_MS: /],
    [{ MESSAGING_ALLOW_UNSIGNED: 'yes' }, /^Invalid MESSAGING_ALLOW_UNSIGNED: /],
  ] as const) {
    t.throws(() => parseConfig(env), { constructor: ConfigError, message }, JSON.stringify(env));
  }
});
