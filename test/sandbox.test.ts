import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { signBody } from '../src/webhooks/signature';
import { PHONE_ID, sendingApp, testSandbox, TO, TOKEN, type Teardown } from './fixtures/sending';

const SECRET = 'sandbox-app-secret';
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'webhooks', `${name}.json`), 'utf8'));
/** The shape of a JSON value: its keys all the way down, with the type of every leaf. */
const shape = (v: unknown): unknown => Array.isArray(v) ? v.map(shape)
  : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : typeof v;
const textRequest = JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'text', text: { body: 'Hi' } });

/** A stand-in webhook that records what it receives, as raw text. */
async function receiver(t: Teardown) {
  const received: Array<{ headers: IncomingHttpHeaders; raw: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('{"status":"received"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/messaging/webhook`, received };
}

async function post(url: string, body: string, token = TOKEN) {
  const res = await request(url, { method: 'POST', body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  return { status: res.statusCode, body: await res.body.json() as Record<string, any> };
}

t.test('the send endpoint checks the token, the phone number id and the body like the network', async (t) => {
  const sandbox = await testSandbox(t);
  const url = `${sandbox.url}/v23.0/${PHONE_ID}/messages`;
  const ok = await post(url, textRequest);
  t.equal(ok.status, 200);
  t.same(shape(ok.body), { messaging_product: 'string', contacts: [{ input: 'string', wa_id: 'string' }], messages: [{ id: 'string' }] });
  t.match(ok.body, { messaging_product: 'whatsapp', contacts: [{ input: TO, wa_id: TO }], messages: [{ id: /^wamid\./ }] });
  t.not((await post(url, textRequest)).body.messages[0].id, ok.body.messages[0].id, 'a fresh wamid each time');

  const badToken = await post(url, textRequest, 'nope');
  t.equal(badToken.status, 401);
  t.same(shape(badToken.body), { error: { message: 'string', type: 'string', code: 'number', fbtrace_id: 'string' } });
  t.match(badToken.body.error, { type: 'OAuthException', code: 190 });
  const otherNumber = await post(`${sandbox.url}/v23.0/999/messages`, textRequest);
  t.match(otherNumber, { status: 400, body: { error: { code: 100, error_subcode: 33 } } });
  const badBody = await post(url, JSON.stringify({ messaging_product: 'whatsapp', to: TO, type: 'text' }));
  t.match(badBody, { status: 400, body: { error: { code: 100, error_data: { messaging_product: 'whatsapp', details: String } } } });
  t.equal(sandbox.requests.length, 5, 'every request is recorded');
  t.equal(sandbox.requests[2]!.headers.authorization, 'Bearer nope');
});

t.test('scripted refusals carry the real status, code and Retry-After', async (t) => {
  const sandbox = await testSandbox(t);
  sandbox.enqueue({ kind: 'fail', error: 'throttled', retryAfter: 7 }, { kind: 'fail', error: 'undeliverable' });
  const url = `${sandbox.url}/${PHONE_ID}/messages`;
  const throttled = await request(url, { method: 'POST', body: textRequest, headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(throttled.statusCode, 429);
  t.equal(throttled.headers['retry-after'], '7');
  t.match(await throttled.body.json(), { error: { code: 130429, error_data: { details: 'Cloud API message throughput has been reached.' } } });
  t.match(await post(url, textRequest), { status: 400, body: { error: { code: 131026, message: '(#131026) Message Undeliverable' } } });
  t.equal((await post(url, textRequest)).status, 200, 'then back to accepting');
});

t.test('after an accepted send: signed callbacks sent, delivered, read, shaped like the real ones', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET, delayMs: 5, enabled: true });
  sandbox.enqueue({ kind: 'accept', waId: '5215551234567' });
  const sent = await post(`${sandbox.url}/v23.0/${PHONE_ID}/messages`, textRequest);
  await sandbox.settled();
  t.equal(hook.received.length, 3);
  const bodies = hook.received.map((r) => JSON.parse(r.raw));
  t.same(bodies.map((b) => b.entry[0].changes[0].value.statuses[0].status), ['sent', 'delivered', 'read']);
  for (const [i, r] of hook.received.entries()) {
    t.equal(r.headers['x-hub-signature-256'], signBody(r.raw, SECRET), 'signed over the raw bytes');
    t.equal(r.headers['content-type'], 'application/json');
    t.match(bodies[i].entry[0].changes[0].value, {
      metadata: { phone_number_id: PHONE_ID }, statuses: [{ id: sent.body.messages[0].id, recipient_id: '5215551234567', timestamp: /^\d{10}$/ }],
    });
  }
  t.same(shape(bodies[0]), shape(fixture('status_sent_cbp')));
  t.same(shape(bodies[1]), shape(fixture('status_delivered_cbp')));
  const read = fixture('status_read');
  delete read.entry[0].changes[0].value.contacts;
  t.same(shape(bodies[2]), shape(read), 'as the read fixture, without its optional contacts');
  t.same(sandbox.deliveries.map((d) => [d.kind, d.status]), [['status', 200], ['status', 200], ['status', 200]]);
});

t.test('callbacks can be switched off; refused sends post none', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, delayMs: 1, enabled: false });
  await post(`${sandbox.url}/${PHONE_ID}/messages`, textRequest);
  sandbox.configureCallbacks({ enabled: true });
  sandbox.enqueue({ kind: 'fail', error: 'server_error' });
  await post(`${sandbox.url}/${PHONE_ID}/messages`, textRequest);
  await sandbox.settled();
  t.equal(hook.received.length, 0);
});

t.test('an injected inbound text is shaped like the real one and signed', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET });
  const delivery = await sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, text: 'hi there', name: 'Ana' });
  t.match(delivery, { kind: 'inbound', status: 200, error: null, wamid: /^wamid\./ });
  const [only] = hook.received;
  t.equal(only!.headers['x-hub-signature-256'], signBody(only!.raw, SECRET));
  const body = JSON.parse(only!.raw);
  t.same(shape(body), shape(fixture('inbound_text')));
  t.match(body.entry[0].changes[0].value, {
    metadata: { phone_number_id: PHONE_ID }, contacts: [{ profile: { name: 'Ana' }, wa_id: TO }],
    messages: [{ from: TO, id: delivery.wamid, type: 'text', text: { body: 'hi there' } }],
  });
});

t.test('the HTTP control API does what the methods do', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t);
  const control = (path: string, body?: unknown) => request(`${sandbox.url}/_sandbox/${path}`, {
    method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.statusCode, body: await r.body.json() as Record<string, any> }));

  t.same(await control('accounts', { phoneNumberId: '555', token: 'other-token' }), { status: 201, body: { phoneNumberId: '555' } });
  t.same(await control('behaviours', { queue: [{ kind: 'fail', error: 'pair_rate_limit' }] }), { status: 200, body: { queued: 1 } });
  t.match(await post(`${sandbox.url}/555/messages`, textRequest, 'other-token'), { status: 400, body: { error: { code: 131056 } } });
  const recorded = await control('requests');
  t.equal(recorded.body.requests.length, 1);
  t.match(recorded.body.requests[0], { method: 'POST', path: '/555/messages', body: textRequest, headers: { authorization: 'Bearer other-token' } });
  t.same(await control('callbacks', { webhookUrl: hook.url, appSecret: SECRET }), { status: 200, body: { configured: true } });
  t.match(await control('inbound', { phoneNumberId: PHONE_ID, from: TO, text: 'yo' }), { status: 200, body: { wamid: /^wamid\./, webhook_status: 200, error: null } });
  t.equal(hook.received.length, 1);
  t.match(await control('behaviours', { queue: [{ kind: 'explode' }] }), { status: 400, body: { error: /queue/ } });
  t.same(await control('reset', {}), { status: 200, body: { reset: true } });
  t.same((await control('requests')).body, { requests: [] });
});

// The plain end-to-end flow is in e2e-webhook.test.ts. With no delay the `sent` callback can overtake
// the send's own answer: the gateway keeps it until the wamid is stored, and the message still ends read.
t.test('end to end with callbacks racing the send answer', async (t) => {
  const ctx = await sendingApp(t, { config: { messagingAppSecret: SECRET } });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = ctx.app.server.address() as AddressInfo;
  ctx.sandbox.configureCallbacks({ webhookUrl: `http://127.0.0.1:${port}/api/messaging/webhook`, appSecret: SECRET, delayMs: 0, enabled: true });
  const res = await ctx.sendText('Hello end to end');
  t.equal(res.statusCode, 201);
  await ctx.sandbox.settled();
  t.same(ctx.sandbox.deliveries.map((d) => d.status), [200, 200, 200], 'the webhook took all three');
  const row = ctx.app.messagesRepo.findById(res.json().id)!;
  t.equal(row.status, 'read');
  t.same(ctx.app.messagesRepo.history(row.id).map((h) => h.status), ['sent', 'delivered', 'read']);
});
