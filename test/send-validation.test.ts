import t from 'tap';
import { sendingApp, TO, TOKEN } from './fixtures/sending';

const pattern = (field: string, re: string) => `${field} must match pattern "${re}"`;
const TO_PATTERN = '^[1-9][0-9]{6,14}$';
const template = { to: TO, template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: '42' };

const textCases: Array<[string, unknown, string]> = [
  ['+ in to', { to: '+15551234567', type: 'text', text: { body: 'x' } }, pattern('body/to', TO_PATTERN)],
  ['letters in to', { to: '1555abc4567', type: 'text', text: { body: 'x' } }, pattern('body/to', TO_PATTERN)],
  ['leading 0', { to: '015551234567', type: 'text', text: { body: 'x' } }, pattern('body/to', TO_PATTERN)],
  ['6 digits', { to: '155512', type: 'text', text: { body: 'x' } }, pattern('body/to', TO_PATTERN)],
  ['16 digits', { to: '1555123456789012', type: 'text', text: { body: 'x' } }, pattern('body/to', TO_PATTERN)],
  ['to as a number', { to: 15551234567, type: 'text', text: { body: 'x' } }, 'body/to must be string'],
  ['4097-char body', { to: TO, type: 'text', text: { body: 'x'.repeat(4097) } }, 'body/text/body must NOT have more than 4096 characters'],
  ['empty body', { to: TO, type: 'text', text: { body: '' } }, 'body/text/body must NOT have fewer than 1 characters'],
  ['type and content disagree', { to: TO, type: 'image', text: { body: 'x' } }, 'body/image is required'],
  ['unknown type', { to: TO, type: 'fax', text: { body: 'x' } },
    'body/type must be one of: text, image, video, audio, document, sticker, location, contacts, interactive, reaction, template'],
  ['missing type', { to: TO, text: { body: 'x' } }, 'body/type is required'],
  ['missing text', { to: TO, type: 'text' }, 'body/text is required'],
  ['unknown field', { to: TO, type: 'text', text: { body: 'x' }, priority: 'high' }, 'body/priority is not an allowed property'],
  ['unknown nested field', { to: TO, type: 'text', text: { body: 'x', preview: true } }, 'body/text/preview is not an allowed property'],
  ['preview_url not a boolean', { to: TO, type: 'text', text: { body: 'x', preview_url: 'yes' } }, 'body/text/preview_url must be boolean'],
];

const templateCases: Array<[string, unknown, string]> = [
  ['missing param2', { ...template, param2: undefined }, 'body/param2 is required'],
  ['uppercase template_name', { ...template, template_name: 'Order_Update' }, pattern('body/template_name', '^[a-z0-9_]{1,512}$')],
  ['bad language', { ...template, language: 'english' }, pattern('body/language', '^[a-z]{2,3}(_[A-Z]{2})?$')],
  ['empty param', { ...template, param3: '' }, 'body/param3 must NOT have fewer than 1 characters'],
  ['1025-char param', { ...template, param1: 'p'.repeat(1025) }, 'body/param1 must NOT have more than 1024 characters'],
  ['param4 without param3', { ...template, param4: 'x' }, 'body/param3 is required when param4 is given (no gaps)'],
  ['param5 without param4', { ...template, param3: 'x', param5: 'x' }, 'body/param4 is required when param5 is given (no gaps)'],
  ['param6', { ...template, param6: 'x' }, 'body/param6 is not an allowed property'],
  ['+ in to', { ...template, to: '+15551234567' }, pattern('body/to', TO_PATTERN)],
];

t.test('bad inputs: 400 VALIDATION_ERROR naming the field; nothing sent or charged', async (t) => {
  const ctx = await sendingApp(t);
  for (const [url, cases] of [['/api/message/send', textCases], ['/api/message/send2', templateCases]] as const) {
    for (const [name, payload, message] of cases) {
      const res = await ctx.post(url, payload);
      t.same([res.statusCode, res.json()], [400, { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message }], `${url}: ${name}`);
    }
  }
  t.equal(ctx.sandbox.requests.length, 0);
  t.equal(ctx.app.messagesRepo.findById(1), undefined);
});

t.test('the limits themselves pass: 4096 characters, 5 params of 1024', async (t) => {
  const ctx = await sendingApp(t);
  t.equal((await ctx.sendText('y'.repeat(4096))).statusCode, 201);
  const p = 'p'.repeat(1024);
  const res = await ctx.post('/api/message/send2', { ...template, language: 'en', param1: p, param2: p, param3: p, param4: p, param5: p });
  t.equal(res.statusCode, 201);
  t.equal(JSON.parse(ctx.sandbox.requests[1]!.body).template.components[0].parameters.length, 5);
});

t.test('a body that is not JSON: 415 or 400, nothing sent', async (t) => {
  const ctx = await sendingApp(t);
  const plain = await ctx.app.inject({ method: 'POST', url: '/api/message/send', headers: { ...ctx.auth, 'content-type': 'text/plain' }, payload: 'hi' });
  t.equal(plain.statusCode, 415);
  t.equal(plain.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  const broken = await ctx.app.inject({ method: 'POST', url: '/api/message/send', headers: { ...ctx.auth, 'content-type': 'application/json' }, payload: '{"to":' });
  t.equal(broken.statusCode, 400);
  t.equal(broken.json().code, 'INVALID_JSON');
  t.equal(ctx.sandbox.requests.length, 0);
});

t.test('the messaging token never appears in answers or logs', async (t) => {
  const ctx = await sendingApp(t);
  const answers = [await ctx.sendText()];
  ctx.sandbox.enqueue({ kind: 'fail', error: 'bad_token' });
  answers.push(await ctx.sendText());
  ctx.sandbox.enqueue({ kind: 'fail', error: 'throttled', retryAfter: 60 });
  answers.push(await ctx.sendText());
  t.same(answers.map((a) => a.statusCode), [201, 502, 429]);
  t.equal(ctx.sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`, 'the token did go to the network');
  for (const answer of answers) t.notOk(answer.body.includes(TOKEN), `not in the ${answer.statusCode} answer`);
  t.ok(ctx.logs().length > 0, 'requests were logged');
  t.notOk(ctx.logs().includes(TOKEN), 'not in the logs');
  t.notOk(ctx.logs().includes(ctx.auth.authorization.slice(7)), 'nor the JWT');
});
