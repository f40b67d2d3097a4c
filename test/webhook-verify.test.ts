import t from 'tap';
import { buildTestApp } from './helper';

const TOKEN = 'verify-me-42';
const url = (query: Record<string, string>) => '/api/messaging/webhook?' + new URLSearchParams(query).toString();
const handshake = (token: string, mode = 'subscribe') => url({ 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': '1158201444' });

t.test('the right token gets the challenge back as plain text', async (t) => {
  const { app } = await buildTestApp(t, { messagingVerifyToken: TOKEN });
  const res = await app.inject({ method: 'GET', url: handshake(TOKEN) });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain/);
  t.equal(res.headers['x-content-type-options'], 'nosniff', 'the echoed text is never sniffed into HTML');
  t.equal(res.body, '1158201444');
});

t.test('a challenge is echoed exactly, whatever it contains', async (t) => {
  const { app } = await buildTestApp(t, { messagingVerifyToken: TOKEN });
  const challenge = 'a b&c=d<é>';
  const res = await app.inject({ method: 'GET', url: url({ 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN, 'hub.challenge': challenge }) });
  t.equal(res.statusCode, 200);
  t.match(res.headers, { 'content-type': /^text\/plain/, 'x-content-type-options': 'nosniff' });
  t.equal(res.body, challenge);
});

t.test('a wrong token, a token prefix or a wrong mode is 403', async (t) => {
  const { app } = await buildTestApp(t, { messagingVerifyToken: TOKEN });
  for (const [token, mode] of [['wrong', 'subscribe'], [TOKEN.slice(0, -1), 'subscribe'], [TOKEN + 'x', 'subscribe'], [TOKEN, 'unsubscribe']] as const) {
    const res = await app.inject({ method: 'GET', url: handshake(token, mode) });
    t.equal(res.statusCode, 403, `${token} / ${mode}`);
    t.same(res.json(), {
      statusCode: 403, code: 'VERIFICATION_FAILED', error: 'Forbidden',
      message: 'Wrong hub.mode or hub.verify_token, or no verify token is configured',
    });
  }
});

t.test('no verify token configured: even a matching-looking handshake is 403', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: handshake('anything') });
  t.equal(res.statusCode, 403);
  t.equal(res.json().code, 'VERIFICATION_FAILED');
});

t.test('a missing or empty parameter is 400 naming it', async (t) => {
  const { app } = await buildTestApp(t, { messagingVerifyToken: TOKEN });
  const full = { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN, 'hub.challenge': 'c' };
  for (const name of Object.keys(full) as (keyof typeof full)[]) {
    const { [name]: _dropped, ...rest } = full;
    const missing = await app.inject({ method: 'GET', url: url(rest) });
    t.equal(missing.statusCode, 400, `${name} missing`);
    t.same(missing.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: `querystring/${name} is required` });
    const empty = await app.inject({ method: 'GET', url: url({ ...full, [name]: '' }) });
    t.equal(empty.statusCode, 400, `${name} empty`);
    t.match(empty.json().message, `querystring/${name}`);
  }
});
