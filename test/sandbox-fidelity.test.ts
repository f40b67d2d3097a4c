// The sandbox as the network: its validation of hostile bodies, paths and media uploads, the control token,
// and escaped callbacks the gateway accepts end to end.
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { PHONE_ID, sendingApp, testSandbox, TO, TOKEN } from './fixtures/sending';

const SECRET = 'fidelity-secret';
const common = { messaging_product: 'whatsapp', recipient_type: 'individual', to: TO };

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
  });
  return { status: res.statusCode, body: await res.body.json() as Record<string, any> };
}

t.test('accepted as the network accepts them', async (t) => {
  const sandbox = await testSandbox(t);
  const url = `${sandbox.url}/${PHONE_ID}/messages`;
  const accepted: [string, unknown][] = [
    ['no type: text by default', { ...common, text: { body: 'hi' } }],
    ['no recipient_type', { messaging_product: 'whatsapp', to: TO, type: 'text', text: { body: 'hi' } }],
    ['a text body that looks like JSON stays a string', { ...common, type: 'text', text: { body: '[1, 2]' } }],
    ['contacts as a JSON string', { ...common, type: 'contacts', contacts: JSON.stringify([{ name: { formatted_name: 'Ana' } }]) }],
    ['interactive as a JSON string', { ...common, type: 'interactive', interactive: JSON.stringify({ type: 'button', body: { text: 'ok?' }, action: { buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }] } }) }],
    ['template components as a JSON string, button index as a string', { ...common, type: 'template', template: { name: 'n', language: { code: 'en', policy: 'deterministic' },
      components: JSON.stringify([{ type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'P' }] }]) } }],
    ['a location header parameter', { ...common, type: 'template', template: { name: 'n', language: { code: 'en' },
      components: [{ type: 'header', parameters: [{ type: 'location', location: { latitude: 1, longitude: 2, name: 'A', address: 'B' } }] }] } }],
    ['reaction with an empty emoji', { ...common, type: 'reaction', reaction: { message_id: 'wamid.X', emoji: '' } }],
  ];
  for (const [name, body] of accepted) t.match(await post(url, body), { status: 200, body: { messages: [{ id: /^wamid\./ }] } }, name);
  t.match(await post(url, { ...common, type: 'template', template: { name: 'n', language: { code: 'en' } } }),
    { body: { messages: [{ message_status: 'accepted' }] } }, 'a template answer carries message_status');
});

t.test('refused with #100 naming the field', async (t) => {
  const sandbox = await testSandbox(t);
  const url = `${sandbox.url}/v23.0/${PHONE_ID}/messages`;
  const button = (id: string) => ({ type: 'reply', reply: { id, title: id } });
  const refused: [string, unknown, string | RegExp][] = [
    ['not JSON', '{"to":', 'body: expected a JSON object'],
    ['an array', '[]', 'body: expected a JSON object'],
    ['another product', { ...common, messaging_product: 'other', type: 'text', text: { body: 'x' } }, 'messaging_product: expected "whatsapp"'],
    ['unknown type', { ...common, type: 'hologram', hologram: {} }, 'type: unsupported message type "hologram"'],
    ['empty text', { ...common, type: 'text', text: { body: '' } }, /^text\.body: Expected string length greater or equal to 1/],
    ['preview_url not a boolean', { ...common, type: 'text', text: { body: 'x', preview_url: 'yes' } }, /^text\.preview_url: Expected boolean/],
    ['unknown field', { ...common, type: 'text', text: { body: 'x' }, colour: 'red' }, /^colour: Unexpected property/],
    ['image with both id and link', { ...common, type: 'image', image: { id: '1', link: 'https://x.example/a.png' } }, /^image\.link: Unexpected property/],
    ['sticker with a caption', { ...common, type: 'sticker', sticker: { id: '1', caption: 'no' } }, /^sticker\.caption: Unexpected property/],
    ['image link not http', { ...common, type: 'image', image: { link: 'file:///etc/passwd' } }, /^image\.link: Expected string to match/],
    ['four reply buttons', { ...common, type: 'interactive', interactive: { type: 'button', body: { text: 'b' }, action: { buttons: ['a', 'b', 'c', 'd'].map(button) } } },
      /^interactive\.action\.buttons: Expected array length to be less or equal to 3/],
    ['cta_url without url', { ...common, type: 'interactive', interactive: { type: 'cta_url', body: { text: 'b' }, action: { name: 'cta_url', parameters: { display_text: 'Go' } } } },
      /^interactive\.action\.parameters\.url: Expected required property/],
    ['a context without message_id', { ...common, type: 'text', text: { body: 'x' }, context: {} }, /^context\.message_id: Expected required property/],
    ['button index 10', { ...common, type: 'template', template: { name: 'n', language: { code: 'en' },
      components: [{ type: 'button', sub_type: 'url', index: 10, parameters: [{ type: 'text', text: 'a' }] }] } }, /^template\.components\[0\]\.index/],
    ['policy other than deterministic', { ...common, type: 'template', template: { name: 'n', language: { code: 'en', policy: 'fallback' } } }, /^template\.language\.policy/],
    ['a broken JSON-encoded field', { ...common, type: 'contacts', contacts: '[{"name":' }, /^contacts: Expected array/],
    ['mark read without message_id', { messaging_product: 'whatsapp', status: 'read' }, /^message_id: Expected required property/],
    ['mark read with another indicator', { messaging_product: 'whatsapp', status: 'read', message_id: 'w', typing_indicator: { type: 'audio' } }, /^typing_indicator\.type/],
  ];
  for (const [name, body, details] of refused) {
    const res = await post(url, body);
    t.match(res, { status: 400, body: { error: { code: 100, type: 'OAuthException', message: '(#100) Invalid parameter', error_data: { messaging_product: 'whatsapp', details } } } }, name);
  }
});

t.test('paths with or without a version; the Host header plays no part; media lookups need the token', async (t) => {
  const sandbox = await testSandbox(t);
  const text = { ...common, type: 'text', text: { body: 'x' } };
  for (const path of [`/${PHONE_ID}/messages`, `/v19.0/${PHONE_ID}/messages`, `/v25.0/${PHONE_ID}/messages?access_token=ignored`]) {
    t.equal((await post(sandbox.url + path, text, { host: 'graph.facebook.com' })).status, 200, path);
  }
  t.match(await post(`${sandbox.url}/v23.0/${PHONE_ID}/nothing`, text), { status: 400, body: { error: { code: 2500 } } });
  const noToken = await request(`${sandbox.url}/v23.0/123456`, { method: 'GET' });
  t.equal(noToken.statusCode, 401);
  t.match(await noToken.body.json(), { error: { code: 190 } });
  t.match(await post(`${sandbox.url}/123456`, text, { 'x-http-method-override': 'GET' }), { status: 400, body: { error: { code: 2500 } } });
});

async function upload(url: string, form: FormData) {
  const res = await fetch(url, { method: 'POST', body: form, headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: await res.json() as Record<string, any> };
}

t.test('media upload: the product in the form or the query, the MIME type from the field or the part; bad uploads refused', async (t) => {
  const sandbox = await testSandbox(t);
  const url = `${sandbox.url}/v23.0/${PHONE_ID}/media`;
  const form = (parts: Record<string, string | [Blob, string]>) => {
    const data = new FormData();
    for (const [k, v] of Object.entries(parts)) typeof v === 'string' ? data.append(k, v) : data.append(k, v[0], v[1]);
    return data;
  };
  const untyped = new Blob(['hello']);
  const inForm = await upload(url, form({ messaging_product: 'whatsapp', type: 'text/plain', file: [untyped, 'a.txt'] }));
  t.match(inForm, { status: 200, body: { id: /^[0-9]+$/ } });
  t.match(sandbox.media.get(inForm.body.id), { mimeType: 'text/plain', filename: 'a.txt', phoneNumberId: PHONE_ID });
  const inQuery = await upload(`${url}?messaging_product=whatsapp`, form({ file: [new Blob(['x'], { type: 'audio/ogg; codecs=opus' }), 'v.ogg'] }));
  t.equal(sandbox.media.get(inQuery.body.id)?.mimeType, 'audio/ogg; codecs=opus', 'from the part');

  const refusals: [string, FormData | string, number, RegExp][] = [
    ['no product', form({ file: [new Blob(['x'], { type: 'image/png' }), 'a.png'] }), 100, /^messaging_product/],
    ['no file', form({ messaging_product: 'whatsapp', type: 'image/png' }), 100, /^file: a file part is required/],
    ['no type field, an untyped part (sent as octet-stream)', form({ messaging_product: 'whatsapp', file: [untyped, 'a'] }), 131053, /"application\/octet-stream" is not a supported/],
    ['an HTML file', form({ messaging_product: 'whatsapp', file: [new Blob(['<script>'], { type: 'text/html' }), 'x.html'] }), 131053, /"text\/html" is not a supported media type/],
    ['a sticker over 500 KiB', form({ messaging_product: 'whatsapp', file: [new Blob([Buffer.alloc(500 * 1024 + 1)], { type: 'image/webp' }), 's.webp'] }), 131053, /over the 512000 bytes limit/],
    ['an empty file', form({ messaging_product: 'whatsapp', file: [new Blob([], { type: 'image/png' }), 'e.png'] }), 131053, /empty/],
  ];
  for (const [name, body, code, details] of refusals) {
    t.match(await upload(url, body as FormData), { status: 400, body: { error: { code, error_data: { details } } } }, name);
  }
  const json = await post(url, { messaging_product: 'whatsapp' });
  t.match(json, { status: 400, body: { error: { code: 100, error_data: { details: 'body: expected multipart/form-data' } } } });
  const broken = await post(url, '--x\r\nnot a part', { 'content-type': 'multipart/form-data; boundary=x' });
  t.match(broken, { status: 400, body: { error: { code: 100, error_data: { details: /multipart/ } } } });
  const otherNumber = await upload(`${sandbox.url}/999/media`, form({ messaging_product: 'whatsapp', file: [new Blob(['x'], { type: 'image/png' }), 'a.png'] }));
  t.match(otherNumber, { status: 400, body: { error: { error_subcode: 33 } } });
  t.match(sandbox.requests.at(-1), { body: /^\[multipart, \d+ bytes\]$/ }, 'uploads are recorded without their bytes');

  sandbox.addAccount({ phoneNumberId: '777', token: 'other-account' });
  const foreign = await request(`${sandbox.url}/${inForm.body.id}`, { headers: { authorization: 'Bearer other-account' } });
  t.equal(foreign.statusCode, 400, "another account cannot look up this account's media");
  await foreign.body.dump();
});

t.test('the control API needs the token when the sandbox has one', async (t) => {
  const sandbox = await testSandbox(t, { controlToken: 'control-123' });
  const control = (headers: Record<string, string>) => request(`${sandbox.url}/_sandbox/requests`, { headers })
    .then(async (r) => ({ status: r.statusCode, body: await r.body.json() as Record<string, any> }));
  t.match(await control({}), { status: 401, body: { error: /x-sandbox-token/ } });
  t.match(await control({ 'x-sandbox-token': 'control-12' }), { status: 401 });
  t.match(await control({ authorization: 'Bearer control-123' }), { status: 401 }, 'not the network token header');
  t.same(await control({ 'x-sandbox-token': 'control-123' }), { status: 200, body: { requests: [] } });
  const inbound = await request(`${sandbox.url}/_sandbox/inbound`, {
    method: 'POST', headers: { 'x-sandbox-token': 'control-123' }, body: JSON.stringify({ phoneNumberId: PHONE_ID, from: TO, text: 'a', media: { type: 'image', id: '1' } }),
  });
  t.equal(inbound.statusCode, 400);
  t.same(await inbound.body.json(), { error: 'give exactly one of text and media' });
});

t.test('end to end: an inbound message with emoji and accents, escaped and signed by the sandbox, stored as written', async (t) => {
  const ctx = await sendingApp(t, { config: { messagingAppSecret: SECRET } });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = ctx.app.server.address() as AddressInfo;
  ctx.sandbox.configureCallbacks({ webhookUrl: `http://127.0.0.1:${port}/api/messaging/webhook`, appSecret: SECRET, enabled: true });
  const text = 'Olá 😀 ñandú — “ok”';
  const delivery = await ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, name: 'Zoë', text });
  t.equal(delivery.status, 200);
  t.ok(delivery.body.includes('\\ud83d\\ude00') && !/[^\x20-\x7e]/.test(delivery.body), 'escaped bytes');
  const row = ctx.app.db.$client.prepare('SELECT text FROM messages WHERE wamid = ?').get(delivery.wamid) as { text: string };
  t.equal(row.text, text);
  const media = await ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, media: { type: 'document', data: Buffer.from('%PDF').toString('base64'), mime_type: 'application/pdf', filename: 'Relatório.pdf' } });
  t.equal(media.status, 200);
  const doc = ctx.app.db.$client.prepare('SELECT type, media_json AS media FROM messages WHERE wamid = ?').get(media.wamid) as { type: string; media: string };
  t.equal(doc.type, 'document');
  t.match(JSON.parse(doc.media), { mime_type: 'application/pdf', filename: 'Relatório.pdf', id: /^[0-9]+$/ });
});
