import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { sandboxUserId } from '../src/sandbox/server';
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
  t.same(shape(ok.body), { messaging_product: 'string', contacts: [{ input: 'string', wa_id: 'string', user_id: 'string' }], messages: [{ id: 'string' }] });
  t.match(ok.body, { messaging_product: 'whatsapp', contacts: [{ input: TO, wa_id: TO, user_id: sandboxUserId(TO) }], messages: [{ id: /^wamid\./ }] });
  t.match(sandboxUserId(TO), /^US\.[0-9]{20}$/, 'a phone number\'s made-up BSUID');
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

t.test('after an accepted send to a phone: signed callbacks sent, delivered, read with the phone and its BSUID', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET, delayMs: 5, enabled: true });
  sandbox.enqueue({ kind: 'accept', waId: '5215551234567' });
  const sent = await post(`${sandbox.url}/v23.0/${PHONE_ID}/messages`, textRequest);
  await sandbox.settled();
  t.equal(hook.received.length, 3);
  const bodies = hook.received.map((r) => JSON.parse(r.raw));
  t.same(bodies.map((b) => b.entry[0].changes[0].value.statuses[0].status), ['sent', 'delivered', 'read']);
  const userId = sandboxUserId(TO);
  for (const [i, r] of hook.received.entries()) {
    t.equal(r.headers['x-hub-signature-256'], signBody(r.raw, SECRET), 'signed over the raw bytes');
    t.equal(r.headers['content-type'], 'application/json');
    t.same(bodies[i].entry[0].changes[0].value, {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: PHONE_ID },
      contacts: [{ profile: {}, wa_id: '5215551234567', user_id: userId }],
      statuses: [{
        id: sent.body.messages[0].id, status: ['sent', 'delivered', 'read'][i], timestamp: bodies[i].entry[0].changes[0].value.statuses[0].timestamp,
        recipient_id: '5215551234567', recipient_user_id: userId,
        pricing: { billable: false, pricing_model: 'PMP', type: 'free_customer_service', category: 'service' },
      }],
    });
    t.match(bodies[i].entry[0].changes[0].value.statuses[0].timestamp, /^\d{10}$/);
  }
  t.same(sent.body.contacts, [{ input: TO, wa_id: '5215551234567', user_id: userId }]);
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

// --- The network's 2026 user ids (BSUIDs): sends to `recipient`, statuses and injections with user ids ---

const BSUID = 'US.13491208655302741918';
const PARENT = 'US.ENT.11815799212886844830';
const control = (sandbox: { url: string }) => (path: string, body?: unknown) => request(`${sandbox.url}/_sandbox/${path}`, {
  method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body),
}).then(async (r) => ({ status: r.statusCode, body: await r.body.json() as Record<string, any> }));
const valueOf = (raw: string) => JSON.parse(raw).entry[0].changes[0];

t.test('a send names exactly one of to or recipient; the answer has user_id always, wa_id only for a shareable phone', async (t) => {
  const sandbox = await testSandbox(t);
  const url = `${sandbox.url}/${PHONE_ID}/messages`;
  const text = { messaging_product: 'whatsapp', type: 'text', text: { body: 'Hi' } };
  const both = await post(url, JSON.stringify({ ...text, to: TO, recipient: BSUID }));
  t.match(both, { status: 400, body: { error: { code: 100, error_data: { details: 'recipient: give either to or recipient, not both' } } } });
  const neither = await post(url, JSON.stringify(text));
  t.match(neither, { status: 400, body: { error: { code: 100, error_data: { details: 'to: required (or recipient, a business-scoped user id)' } } } });
  const badBsuid = await post(url, JSON.stringify({ ...text, recipient: '15551234567' }));
  t.match(badBsuid, { status: 400, body: { error: { code: 100, error_data: { details: /^recipient: Expected string to match/ } } } });

  const unknown = await post(url, JSON.stringify({ ...text, recipient: BSUID }));
  t.equal(unknown.status, 200);
  t.same(unknown.body.contacts, [{ input: BSUID, user_id: BSUID }], 'a BSUID the sandbox was not told about: no phone');

  t.same(await control(sandbox)('users', { phone: '447700900123', userId: 'GB.55501234', username: '@ana', name: 'Ana' }),
    { status: 201, body: { phone: '447700900123', userId: 'GB.55501234', username: '@ana', name: 'Ana', phoneShareable: true } });
  t.same((await post(url, JSON.stringify({ ...text, recipient: 'GB.55501234' }))).body.contacts,
    [{ input: 'GB.55501234', wa_id: '447700900123', user_id: 'GB.55501234' }], 'a BSUID whose phone is shareable');
  sandbox.addUser({ phone: '447700900999', username: '@hidden', phoneShareable: false });
  t.same((await post(url, JSON.stringify({ ...text, to: '447700900999' }))).body.contacts,
    [{ input: '447700900999', user_id: sandboxUserId('447700900999') }], 'a phone that is not shareable: no wa_id');
  t.same(JSON.parse(sandbox.requests.at(-2)!.body).recipient, 'GB.55501234', 'recorded as sent');
});

t.test('statuses after a send to a BSUID: contacts and recipient_user_id, no recipient_id, shaped like the network\'s', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET, delayMs: 0, enabled: true });
  sandbox.addUser({ userId: BSUID, parentUserId: PARENT, username: '@pablomorales', name: 'Pablo M.' });
  const template = { messaging_product: 'whatsapp', recipient: BSUID, type: 'template', template: { name: 'order_update', language: { code: 'en' } } };
  const sent = await post(`${sandbox.url}/${PHONE_ID}/messages`, JSON.stringify(template));
  t.same(sent.body.contacts, [{ input: BSUID, user_id: BSUID }]);
  await sandbox.settled();
  t.equal(hook.received.length, 3);
  const changes = hook.received.map((r) => valueOf(r.raw));
  t.same(changes.map((c) => c.value.statuses[0].status), ['sent', 'delivered', 'read']);
  t.same(shape(JSON.parse(hook.received[1]!.raw)), shape(fixture('bsuid_status_delivered_to_bsuid')), 'the network\'s documented example');
  for (const change of changes) {
    t.equal(change.field, 'messages');
    t.same(change.value.contacts, [{ profile: { name: 'Pablo M.', username: '@pablomorales' }, user_id: BSUID, parent_user_id: PARENT }]);
    t.same(change.value.statuses[0], {
      id: sent.body.messages[0].id, status: change.value.statuses[0].status, timestamp: change.value.statuses[0].timestamp,
      recipient_user_id: BSUID, recipient_parent_user_id: PARENT,
      pricing: { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' },
    });
  }
});

t.test('an injected status: the earlier parent field name, a shareable phone, or under standby', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET });
  const call = control(sandbox);
  await call('users', { phone: '16315551181', userId: 'US.13491208655302741918', parentUserId: 'US.11815799212886844830', username: '@testusername', name: 'test user name' });
  t.same(await call('status', { phoneNumberId: PHONE_ID, wamid: 'wamid.A', status: 'read', to: '16315551181', parentField: 'parent_recipient_user_id' }),
    { status: 200, body: { webhook_status: 200, error: null } });
  const read = JSON.parse(hook.received[0]!.raw);
  delete read.entry[0].changes[0].value.statuses[0].pricing;
  t.same(shape(read), shape(fixture('status_read_v25_with_user_id')), 'as the v25 read fixture (which has no pricing)');
  t.same(read.entry[0].changes[0].value.statuses[0], {
    id: 'wamid.A', status: 'read', timestamp: read.entry[0].changes[0].value.statuses[0].timestamp,
    recipient_id: '16315551181', recipient_user_id: 'US.13491208655302741918', parent_recipient_user_id: 'US.11815799212886844830',
  });

  t.equal((await call('status', { phoneNumberId: PHONE_ID, wamid: 'wamid.B', status: 'delivered', recipient: BSUID, field: 'standby' })).status, 200);
  const standby = valueOf(hook.received[1]!.raw);
  t.equal(standby.field, 'standby');
  t.same(Object.keys(standby.value), ['messaging_product', 'metadata', 'standby']);
  t.match(standby.value.standby, { statuses: [{ id: 'wamid.B', status: 'delivered', recipient_id: '16315551181', recipient_user_id: BSUID }] });
  t.match(await call('status', { phoneNumberId: PHONE_ID, wamid: 'wamid.C', status: 'read' }), { status: 400, body: { error: 'give exactly one of to and recipient' } });
});

t.test('inbound injection: a phone-less user, a user with phone and BSUID, a hidden phone', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET });
  const call = control(sandbox);
  const phoneless = await call('inbound', {
    phoneNumberId: PHONE_ID, fromUserId: BSUID, fromParentUserId: PARENT, username: '@realsheenanelson', name: 'Sheena Nelson', text: 'Does it come in another color?',
  });
  t.match(phoneless, { status: 200, body: { wamid: /^wamid\./, webhook_status: 200, error: null } });
  const body = JSON.parse(hook.received[0]!.raw);
  t.same(shape(body), shape(fixture('bsuid_inbound_text_no_phone')), 'the network\'s documented example');
  t.same(body.entry[0].changes[0].value.contacts, [{ profile: { name: 'Sheena Nelson', username: '@realsheenanelson' }, user_id: BSUID, parent_user_id: PARENT }]);
  t.same(body.entry[0].changes[0].value.messages, [{
    from_user_id: BSUID, from_parent_user_id: PARENT, id: phoneless.body.wamid, timestamp: body.entry[0].changes[0].value.messages[0].timestamp,
    text: { body: 'Does it come in another color?' }, type: 'text',
  }]);

  await call('inbound', { phoneNumberId: PHONE_ID, from: TO, fromUserId: 'US.777', name: 'Ana', text: 'both' });
  const both = valueOf(hook.received[1]!.raw).value;
  t.same(both.contacts, [{ profile: { name: 'Ana' }, wa_id: TO, user_id: 'US.777' }]);
  t.match(both.messages[0], { from: TO, from_user_id: 'US.777', type: 'text' });

  sandbox.addUser({ phone: '447700900999', userId: 'GB.999', username: '@hidden', phoneShareable: false });
  await call('inbound', { phoneNumberId: PHONE_ID, from: '447700900999', text: 'hidden' });
  const hidden = valueOf(hook.received[2]!.raw).value;
  t.same(hidden.contacts, [{ profile: { name: 'Sandbox Contact', username: '@hidden' }, user_id: 'GB.999' }], 'an added user whose phone is not shareable');
  t.notOk('from' in hidden.messages[0]);
  t.equal(hidden.messages[0].from_user_id, 'GB.999');

  await call('inbound', { phoneNumberId: PHONE_ID, fromUserId: BSUID, text: 'agent holds it', field: 'standby' });
  const standby = valueOf(hook.received[3]!.raw);
  t.equal(standby.field, 'standby');
  t.match(standby.value.standby, { contacts: [{ user_id: BSUID }], messages: [{ from_user_id: BSUID, text: { body: 'agent holds it' } }] });
  t.notOk('messages' in standby.value);

  t.match(await call('inbound', { phoneNumberId: PHONE_ID, text: 'nobody' }), { status: 400, body: { error: /give from/ } });
  t.match(await call('inbound', { phoneNumberId: PHONE_ID, fromUserId: 'not-a-bsuid', text: 'x' }), { status: 400, body: { error: /fromUserId/ } });
  t.equal(hook.received.length, 4);
});

t.test('echoes: the AI agent\'s under standby, the phone app\'s under smb_message_echoes', async (t) => {
  const hook = await receiver(t);
  const sandbox = await testSandbox(t, { webhookUrl: hook.url, appSecret: SECRET });
  const call = control(sandbox);
  const agent = await call('echo', { phoneNumberId: PHONE_ID, origin: 'agent', toUserId: BSUID, text: 'Yes, in blue.' });
  t.match(agent, { status: 200, body: { wamid: /^wamid\./, webhook_status: 200, error: null } });
  const standby = valueOf(hook.received[0]!.raw);
  t.equal(standby.field, 'standby');
  t.same(standby.value.standby, { message_echoes: [{
    from: '15550000000', to_user_id: BSUID, id: agent.body.wamid, timestamp: standby.value.standby.message_echoes[0].timestamp, type: 'text', text: { body: 'Yes, in blue.' },
  }] });
  const app = await call('echo', { phoneNumberId: PHONE_ID, origin: 'business_app', to: TO, text: 'from the phone' });
  const smb = valueOf(hook.received[1]!.raw);
  t.equal(smb.field, 'smb_message_echoes');
  t.same(smb.value.message_echoes, [{ from: '15550000000', to: TO, id: app.body.wamid, timestamp: smb.value.message_echoes[0].timestamp, type: 'text', text: { body: 'from the phone' } }]);
  t.equal(hook.received[1]!.headers['x-hub-signature-256'], signBody(hook.received[1]!.raw, SECRET));
  t.match(await call('echo', { phoneNumberId: PHONE_ID, origin: 'agent', text: 'to nobody' }), { status: 400, body: { error: /give to/ } });
  t.same(sandbox.deliveries.map((d) => d.kind), ['echo', 'echo']);
});

t.test('the next send can fail with 131062 (this message type cannot go to a BSUID) or any code', async (t) => {
  const sandbox = await testSandbox(t);
  const call = control(sandbox);
  const url = `${sandbox.url}/${PHONE_ID}/messages`;
  const auth = JSON.stringify({ messaging_product: 'whatsapp', recipient: BSUID, type: 'template', template: { name: 'otp', language: { code: 'en' } } });
  t.same(await call('behaviours', { queue: [{ kind: 'fail', error: 'bsuid_not_supported' }, { kind: 'fail', code: 131062, details: 'mine' }, { kind: 'fail', code: 131057, status: 503 }] }),
    { status: 200, body: { queued: 3 } });
  const named = await post(url, auth);
  t.equal(named.status, 400);
  t.same({ ...named.body.error, fbtrace_id: 'x' }, {
    message: '(#131062) Business-scoped user ID recipients not supported', type: 'OAuthException', code: 131062,
    error_data: { messaging_product: 'whatsapp', details: 'This message type cannot be sent to a business-scoped user ID (e.g. an authentication template). Send it to the phone number.' },
    fbtrace_id: 'x',
  });
  t.match(await post(url, auth), { status: 400, body: { error: { code: 131062, message: '(#131062) Sandbox error 131062', error_data: { details: 'mine' } } } });
  t.match(await post(url, auth), { status: 503, body: { error: { code: 131057 } } });
  t.equal((await post(url, auth)).status, 200, 'then back to accepting');
  t.match(await call('behaviours', { queue: [{ kind: 'fail', code: 'x' }] }), { status: 400 });
});
