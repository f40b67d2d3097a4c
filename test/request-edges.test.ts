// SPEC §2 at the edges: query integers, request ids, URLs Fastify refuses, body-less routes, secrets in logged URLs.
import { connect } from 'node:net';
import t from 'tap';
import { bearer, buildTestApp, createAdmin } from './helper';

const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('query integers are plain digits within range', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await createAdmin(app);
  const auth = bearer(app, admin);
  const cases: [string, string][] = [
    [`/api/users?offset=1e300`, 'querystring/offset must be integer'],
    [`/api/users?offset=99999999999999999999`, 'querystring/offset must be <= 9007199254740991'],
    [`/api/users?offset=9007199254740992`, 'querystring/offset must be <= 9007199254740991'],
  ];
  for (const url of ['/api/users', `/api/user/${admin.id}/conversations`]) {
    for (const value of ['1e2', '0x10', '1.0', '%201', '1%20', '01', '+1', '']) cases.push([`${url}?limit=${value}`, 'querystring/limit must be integer']);
  }
  for (const [url, message] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: auth });
    t.equal(res.statusCode, 400, url);
    t.same(res.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', message), url);
  }
  const far = await app.inject({ method: 'GET', url: '/api/users?offset=9007199254740991&limit=7', headers: auth });
  t.same(far.json(), { users: [], total: 1 }, 'the largest offset is an empty page');
  const plain = await app.inject({ method: 'GET', url: `/api/user/${admin.id}/conversations?limit=7`, headers: auth });
  t.equal(plain.statusCode, 200, 'plain digits pass');
});

t.test('a caller request id is kept only when short and plain', async (t) => {
  const { app, logs } = await buildTestApp(t);
  const hostile = `<script>${'x'.repeat(463)}</script>`;
  t.equal(hostile.length, 480);
  for (const [given, kept] of [['trace-42.a_B', true], [hostile, false], ['a'.repeat(129), false], ['a'.repeat(128), true], ['a b', false]] as const) {
    const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
    if (kept) t.equal(res.headers['x-request-id'], given, given);
    else t.match(res.headers['x-request-id'], UUID, given.slice(0, 20));
  }
  t.notMatch(logs(), /<script>|x{463}/, 'a refused id is not logged');
});

t.test('URLs the router refuses get the error shape and a request id', async (t) => {
  const { app } = await buildTestApp(t);
  const auth = bearer(app, await createAdmin(app));
  const cases: [string, string][] = [
    ['/api/user/%/conversations', 'The URL is not valid: bad percent-encoding'],
    ['/api/user/%zz', 'The URL is not valid: bad percent-encoding'],
    [`/api/user/${'9'.repeat(300)}/conversations`, 'A path segment is longer than 200 characters'],
  ];
  for (const [url, message] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: { ...auth, 'x-request-id': 'edge-1' } });
    t.equal(res.statusCode, 400, url.slice(0, 40));
    t.same(res.json(), err(400, 'BAD_REQUEST', 'Bad Request', message), url.slice(0, 40));
    t.equal(res.headers['x-request-id'], 'edge-1');
  }
});

t.test('a route without a body accepts an empty one of any content type, and nothing else', async (t) => {
  const { app } = await buildTestApp(t);
  const logout = (contentType: string, payload: string) => app.inject({ method: 'POST', url: '/api/logout', headers: { 'content-type': contentType }, payload });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/json']) {
    const res = await logout(type, '');
    t.equal(res.statusCode, 200, `${type}, empty`);
    t.same(res.json(), { message: 'Logged out' });
  }
  const UNSUPPORTED = err(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', 'Unsupported Media Type');
  for (const [url, payload] of [['/api/logout', 'x'], ['/api/login', '{"email":"a@b.c","password":"long-enough"}']]) {
    const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain' }, payload });
    t.equal(res.statusCode, 415, `${url}, text/plain with a body`);
    t.same(res.json(), UNSUPPORTED);
  }
  const login = await app.inject({ method: 'POST', url: '/api/login', headers: { 'content-type': 'text/plain' }, payload: '' });
  t.same(login.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', 'body must be object'), 'a route with a body still needs one');
});

t.test('only JSON whitespace counts as no body; other blank characters are invalid JSON', async (t) => {
  const { app } = await buildTestApp(t);
  const post = (url: string, payload: string) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
  // Escaped names: a raw U+2028 would break the TAP output line.
  const name = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  for (const blank of ['', ' ', ' \t\r\n ']) {
    const logout = await post('/api/logout', blank);
    t.equal(logout.statusCode, 200, `logout ${name(blank)}`);
    t.same(logout.json(), { message: 'Logged out' });
    const login = await post('/api/login', blank);
    t.same(login.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', 'body must be object'), `login ${name(blank)}: no body`);
  }
  const INVALID = err(400, 'INVALID_JSON', 'Bad Request', 'Request body is not valid JSON');
  // JavaScript's trim() drops all of these; JSON allows none of them.
  for (const blank of ['\v', '\f', '\u00a0', '\ufeff', ' \u00a0 ', '\ufeff\n', '\u2028', '\u3000', '\t\v\r\n']) {
    for (const url of ['/api/logout', '/api/login']) {
      const res = await post(url, blank);
      t.equal(res.statusCode, 400, `${url} ${name(blank)}`);
      t.same(res.json(), INVALID, `${url} ${name(blank)}`);
    }
  }
});

t.test('the webhook verify token never reaches the logs', async (t) => {
  const { app, logs } = await buildTestApp(t, { messagingVerifyToken: 'SECRETVT' });
  for (const key of ['hub.verify_token', 'hub%2Everify_token', '%68ub.verify_token']) {
    const res = await app.inject({ method: 'GET', url: `/api/messaging/webhook?hub.mode=subscribe&${key}=SECRETVT&hub.challenge=1` });
    t.equal(res.statusCode, 200, key);
    t.equal(res.body, '1');
  }
  t.match(logs(), /"url":"\/api\/messaging\/webhook\?hub\.mode=subscribe&hub\.verify_token=\[redacted\]&hub\.challenge=1"/);
  // Misspelt or oddly separated: refused, and masked all the same.
  for (const query of ['hub.verify_token+=SECRETVT', 'hub.verify_token%00=SECRETVT', 'hub.mode=subscribe;hub.verify_token=SECRETVT']) {
    const res = await app.inject({ method: 'GET', url: `/api/messaging/webhook?${query}&hub.challenge=1` });
    t.equal(res.statusCode, 400, query);
  }
  t.notOk(logs().includes('SECRETVT'), 'the token is not in the logs');
});

t.test('a request Node cannot parse still gets the error shape and a request id', async (t) => {
  const { app } = await buildTestApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const raw = (request: string) => new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => { answer += chunk.toString(); });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
  const parts = (answer: string) => {
    const [head, body] = answer.split('\r\n\r\n');
    return { status: head!.split('\r\n')[0], requestId: /x-request-id: (\S+)/i.exec(head!)?.[1], body: JSON.parse(body!) };
  };

  const bad = parts(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'));
  t.equal(bad.status, 'HTTP/1.1 400 Bad Request');
  t.match(bad.requestId, UUID);
  t.same(bad.body, err(400, 'BAD_REQUEST', 'Bad Request', 'The request could not be parsed'));

  const huge = parts(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
  t.equal(huge.status, 'HTTP/1.1 431 Request Header Fields Too Large');
  t.same(huge.body, err(431, 'HEADERS_TOO_LARGE', 'Request Header Fields Too Large', 'The request headers are too large'));
});
