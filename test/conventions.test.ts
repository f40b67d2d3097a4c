// SPEC §2/§3 conventions on the auth and user routes: bodies, ids, tokens, roles, secrets, docs.
import { createHmac } from 'node:crypto';
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });
const INVALID_TOKEN = err(401, 'UNAUTHORIZED', 'Unauthorized', 'Token is invalid or expired');
const NO_TOKEN = err(401, 'UNAUTHORIZED', 'Unauthorized', 'Authentication required');
const FORBIDDEN = err(403, 'FORBIDDEN', 'Forbidden', 'Your role may not do this');

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT signed by hand, to build the ones the app itself never issues. */
function signJwt(header: object, claims: object, secret: string): string {
  const unsigned = `${b64(header)}.${b64(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

const login = (app: App, email: string, password = PASSWORD) =>
  app.inject({ method: 'POST', url: '/api/login', payload: { email, password } });

t.test('bodies: JSON only, 100 KB at most, strict fields, valid JSON', async (t) => {
  const { app } = await buildTestApp(t);
  const post = (headers: Record<string, string>, payload: string) => app.inject({ method: 'POST', url: '/api/login', headers, payload });
  const cases: [string, Record<string, string>, string, object][] = [
    ['text/plain', { 'content-type': 'text/plain' }, 'email=a', err(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', 'Unsupported Media Type')],
    ['form', { 'content-type': 'application/x-www-form-urlencoded' }, 'email=a&password=b', err(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', 'Unsupported Media Type')],
    ['too large', { 'content-type': 'application/json' }, JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(101 * 1024) }), err(413, 'PAYLOAD_TOO_LARGE', 'Payload Too Large', 'Request body is too large')],
    ['malformed', { 'content-type': 'application/json' }, '{"email": "a@b.c",', err(400, 'INVALID_JSON', 'Bad Request', 'Request body is not valid JSON')],
    ['prototype pollution', { 'content-type': 'application/json' }, '{"email":"a@b.c","password":"x","__proto__":{"x":1}}', err(400, 'INVALID_JSON', 'Bad Request', 'Request body is not valid JSON')],
    ['unknown field', { 'content-type': 'application/json' }, '{"email":"a@b.c","password":"x","pasword":"y"}', err(400, 'VALIDATION_ERROR', 'Bad Request', 'body/pasword is not an allowed property')],
    ['array', { 'content-type': 'application/json' }, '[]', err(400, 'VALIDATION_ERROR', 'Bad Request', 'body must be object')],
    ['no body', { 'content-type': 'application/json' }, '', err(400, 'VALIDATION_ERROR', 'Bad Request', 'body must be object')],
  ];
  for (const [name, headers, payload, body] of cases) {
    const res = await post(headers, payload);
    t.same(res.json(), body, name);
    t.equal(res.statusCode, (body as { statusCode: number }).statusCode, name);
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${name}: x-request-id`);
  }
});

t.test('ids: only positive integers', async (t) => {
  const { app } = await buildTestApp(t);
  const auth = bearer(app, await createAdmin(app));
  for (const id of ['abc', '0', '-1', '1.5', '9007199254740993', '%20', '', '1e3', '0x10', '01', ' 1']) {
    for (const [method, url] of [['GET', `/api/user/${id}`], ['PUT', `/api/user/update/${id}`], ['DELETE', `/api/user/delete/${id}`]] as const) {
      const res = await app.inject({ method, url, headers: auth, ...(method === 'PUT' ? { payload: { monthly_credits: 1 } } : {}) });
      t.equal(res.statusCode, 400, `${method} ${url}`);
      t.equal(res.json().code, 'VALIDATION_ERROR', `${method} ${url}`);
      t.match(res.json().message, /^params\/id must /, `${method} ${url}`);
    }
  }
});

t.test('a JWT is read from the header, then the cookie, then a POST body', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await createAdmin(app);
  const client = await createUser(app, { email: 'ana@example.com' });
  const adminJwt = app.issueToken(admin);
  const clientJwt = app.issueToken(client);
  const list = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url: '/api/users', headers, cookies });
  const create = (email: string, token: string, cookies: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/api/user/create', cookies, payload: { email, password: 'long-enough', token } });

  t.equal((await list({}, { token: adminJwt })).statusCode, 200, 'cookie alone');
  t.same((await list({ authorization: `Bearer ${clientJwt}` }, { token: adminJwt })).json(), FORBIDDEN, 'header beats cookie');
  t.same((await list({ authorization: 'Bearer nonsense' }, { token: adminJwt })).json(), INVALID_TOKEN, 'a bad header is not skipped');
  t.same((await list({ authorization: `Basic ${adminJwt}` }, { token: adminJwt })).json(), NO_TOKEN, 'not a Bearer header');

  const created = await create('ben@example.com', adminJwt);
  t.equal(created.statusCode, 201, 'body token alone');
  t.equal(created.json().email, 'ben@example.com');
  t.same((await create('cy@example.com', adminJwt, { token: clientJwt })).json(), FORBIDDEN, 'cookie beats body');
  t.equal(app.usersRepo.findByEmail('cy@example.com'), undefined);

  // Only POST bodies carry a token.
  const put = await app.inject({ method: 'PUT', url: `/api/user/update/${client.id}`, payload: { monthly_credits: 1, token: adminJwt } });
  t.same(put.json(), NO_TOKEN);
});

t.test('bad tokens are 401s', async (t) => {
  const { app, config } = await buildTestApp(t);
  const admin = await createAdmin(app);
  const secret = config.jwtSecret!;
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: String(admin.id), role: 'ADMIN', ver: 1, jti: 'hand-made', epoch: admin.sessionEpoch, iat: now };
  const valid = app.issueToken(admin);
  const [head, , signature] = valid.split('.');
  const tokens: Record<string, string> = {
    expired: signJwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now - 7200, exp: now - 3600 }, secret),
    'other key': signJwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: now + 3600 }, 'another-secret-another-secret-another'),
    tampered: `${head}.${b64({ ...claims, sub: '999', exp: now + 3600 })}.${signature}`,
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: now + 3600 })}.`,
    'HS512': signJwt({ alg: 'HS512', typ: 'JWT' }, { ...claims, exp: now + 3600 }, secret),
    garbage: 'not.a.jwt',
  };
  for (const [name, token] of Object.entries(tokens)) {
    const res = await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } });
    t.equal(res.statusCode, 401, name);
    t.same(res.json(), INVALID_TOKEN, name);
  }
  const handMade = signJwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: now + 3600 }, secret);
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${handMade}` } })).statusCode, 200, 'the control token is accepted');
  const missing = await app.inject({ method: 'GET', url: '/api/me' });
  t.same(missing.json(), NO_TOKEN);
  t.equal(missing.statusCode, 401);
});

t.test('every request re-reads the user: deleted, disabled, old token version', async (t) => {
  const { app } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const ben = await createUser(app, { email: 'ben@example.com' });
  const cy = await createUser(app, { email: 'cy@example.com' });
  const sessions = { ana: bearer(app, ana), ben: bearer(app, ben), cy: bearer(app, cy) };
  app.usersRepo.delete(ana.id);
  app.usersRepo.update(ben.id, { isActive: false }, new Date());
  app.usersRepo.update(cy.id, { passwordHash: 'changed' }, new Date());
  const me = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/me', headers });
  t.same((await me(sessions.ana)).json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Session has ended; log in again'), 'deleted');
  t.same((await me(sessions.ben)).json(), err(403, 'ACCOUNT_DISABLED', 'Forbidden', 'This account is disabled'), 'disabled');
  t.same((await me(sessions.cy)).json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Session has ended; log in again'), 'old version');
});

t.test('user endpoints are for administrators only', async (t) => {
  const { app } = await buildTestApp(t);
  const client = await createUser(app, { email: 'ana@example.com' });
  const calls = [
    { method: 'POST', url: '/api/user/create', payload: { email: 'ben@example.com', password: 'long-enough' } },
    { method: 'PUT', url: `/api/user/update/${client.id}`, payload: { monthly_credits: 1000 } },
    { method: 'DELETE', url: `/api/user/delete/${client.id}` },
    { method: 'GET', url: '/api/users' },
    { method: 'GET', url: `/api/user/${client.id}` },
  ] as const;
  for (const call of calls) {
    const asClient = await app.inject({ ...call, headers: bearer(app, client) });
    t.equal(asClient.statusCode, 403, `${call.method} ${call.url} as CLIENT`);
    t.same(asClient.json(), FORBIDDEN);
    const anonymous = await app.inject(call);
    t.equal(anonymous.statusCode, 401, `${call.method} ${call.url} anonymous`);
    t.same(anonymous.json(), NO_TOKEN);
  }
  t.same(app.usersRepo.findById(client.id), client, 'nothing changed');
  t.equal(app.usersRepo.findByEmail('ben@example.com'), undefined);
});

t.test('secrets never appear in answers or logs', async (t) => {
  const { app, logs } = await buildTestApp(t);
  await createAdmin(app);
  const adminLogin = await login(app, 'admin@example.com');
  const jwt = adminLogin.cookies[0]!.value;
  const secrets = [PASSWORD, 'first-password-1', 'second-password-2', 'EAAG-messaging-secret', jwt];
  const answers = [adminLogin];
  answers.push(await app.inject({
    method: 'POST', url: '/api/user/create', cookies: { token: jwt },
    payload: { email: 'ana@example.com', password: 'first-password-1', messaging_token: 'EAAG-messaging-secret' },
  }));
  answers.push(await app.inject({ method: 'PUT', url: '/api/user/update/2', headers: { authorization: `Bearer ${jwt}` }, payload: { password: 'second-password-2', messaging_token: 'EAAG-messaging-secret' } }));
  answers.push(await app.inject({ method: 'POST', url: '/api/user/create', payload: { email: 'x', password: 'first-password-1', token: jwt } }));
  answers.push(await app.inject({ method: 'GET', url: '/api/users', headers: { authorization: `Bearer ${jwt}`, cookie: `token=${jwt}` } }));
  answers.push(await app.inject({ method: 'GET', url: '/api/user/2', cookies: { token: jwt } }));
  answers.push(await login(app, 'ana@example.com', 'second-password-2'));
  answers.push(await login(app, 'ana@example.com', 'first-password-1'));
  answers.push(await app.inject({ method: 'POST', url: '/api/login', headers: { 'content-type': 'application/json' }, payload: `{"email":"ana@example.com","password":"${PASSWORD}"` }));
  t.equal(answers.length, 9);
  t.match(logs(), /"reqId"/, 'logs were captured');
  for (const secret of secrets) {
    for (const res of answers) t.notOk(res.body.includes(secret), `answer ${res.statusCode} ${res.body.slice(0, 40)} is free of a secret`);
    t.notOk(logs().includes(secret), 'logs are free of a secret');
  }
  t.notMatch(logs(), /argon2/);
});

t.test('x-request-id is on every answer, errors included', async (t) => {
  const { app } = await buildTestApp(t);
  for (const call of [{ method: 'GET', url: '/api/me' }, { method: 'POST', url: '/api/logout' }, { method: 'GET', url: '/api/users' }] as const) {
    const res = await app.inject({ ...call, headers: { 'x-request-id': 'trace-42' } });
    t.equal(res.headers['x-request-id'], 'trace-42', call.url);
  }
});

t.test('/docs/json is an OpenAPI 3 document of the auth and user routes', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(res.statusCode, 200);
  const doc = res.json();
  t.match(doc.openapi, /^3\./);
  const routes: [string, string][] = [
    ['/api/login', 'post'], ['/api/logout', 'post'], ['/api/me', 'get'], ['/api/user/create', 'post'],
    ['/api/user/update/{id}', 'put'], ['/api/user/delete/{id}', 'delete'], ['/api/users', 'get'], ['/api/user/{id}', 'get'],
  ];
  for (const [path, method] of routes) t.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
  t.same(doc.paths['/api/user/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/User' });
  const user = doc.components.schemas.User;
  t.notOk('messaging_token' in user.properties, 'the token is not part of the user object');
  t.same(doc.paths['/api/user/create'].post.requestBody.content['application/json'].schema.required, ['email', 'password']);
  const docs = await app.inject({ method: 'GET', url: '/docs' });
  t.ok([200, 302].includes(docs.statusCode), 'the interactive page answers');
});
