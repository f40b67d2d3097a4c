// A real Cloud API SDK from npm (whatsapp-api-js) against the sandbox: every message type, mark-read, media,
// refusals it can read, and callbacks it verifies with its own signature check (escaped non-ASCII included).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { ClientMessage } from 'whatsapp-api-js/types' with { 'resolution-mode': 'import' };
import { PHONE_ID, testSandbox, TO, TOKEN, type Teardown } from './fixtures/sending';

const SECRET = 'sdk-app-secret';
const GRAPH = 'https://graph.facebook.com';

// The SDK is an ES module: loaded with import() from this CommonJS test.
const sdk = () => import('whatsapp-api-js');
const builders = () => import('whatsapp-api-js/messages');
type SDK = Awaited<ReturnType<typeof sdk>>;

/** The SDK pointed at the sandbox through its documented `ponyfill.fetch`: graph.facebook.com is rewritten to the loopback URL. */
async function client(t: Teardown, options: { webhookUrl?: string } = {}) {
  const sandbox = await testSandbox(t, { appSecret: SECRET, delayMs: 0, enabled: options.webhookUrl !== undefined, webhookUrl: options.webhookUrl });
  const { WhatsAppAPI } = await sdk();
  const urls: string[] = [];
  const fetchVia: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(GRAPH, sandbox.url);
    urls.push(url);
    return fetch(url, init);
  };
  const api = new WhatsAppAPI({ token: TOKEN, appSecret: SECRET, v: 'v23.0', ponyfill: { fetch: fetchVia } });
  return { sandbox, api, urls, WhatsAppAPI };
}

const lastBody = (sandbox: { requests: { body: string }[] }) => JSON.parse(sandbox.requests.at(-1)!.body);

t.test('every message type the SDK builds is accepted, with replies and opaque data', async (t) => {
  const { sandbox, api, urls } = await client(t);
  const M = await builders();
  const png = new M.Image('https://example.com/a.png', false);
  const rows = (prefix: string, n: number, description?: string) =>
    Array.from({ length: n }, (_, i) => new M.Row(`${prefix}${i}`, `${prefix.toUpperCase()} ${i}`, description)) as [InstanceType<typeof M.Row>, ...InstanceType<typeof M.Row>[]];
  const messages: [string, ClientMessage][] = [
    ['text with preview_url', new M.Text('Olá 😀 https://example.com', true)],
    ['image by id', new M.Image('1234567890', true, 'a caption')], ['image by link', png],
    ['video by id', new M.Video('1234567890', true, 'clip')], ['video by link', new M.Video('https://example.com/v.mp4', false)],
    ['audio by id', new M.Audio('1234567890', true)], ['voice by link', new M.Audio('https://example.com/a.ogg', false, true)],
    ['document by id', new M.Document('1234567890', true, 'the contract', 'contract.pdf')],
    ['document by link', new M.Document('https://example.com/d.pdf', false, undefined, 'd.pdf')],
    ['sticker by id', new M.Sticker('1234567890', true)], ['sticker by link', new M.Sticker('https://example.com/s.webp', false)],
    ['location', new M.Location(-46.6333, -23.5505, 'Praça da Sé', 'São Paulo')],
    ['contacts (sent as a JSON string)', new M.Contacts(
      [new M.Name('Ana Núñez', 'Ana', 'Núñez'), new M.Phone('+1 555 123 4567', 'CELL', '15551234567'), new M.Email('ana@example.com', 'WORK'),
        new M.Address('Brasil', 'BR', 'SP', 'São Paulo', 'Rua A', '01000-000', 'HOME'), new M.Birthday('1990', '02', '28'),
        new M.Organization('Acme', 'Sales', 'Lead'), new M.Url('https://example.com', 'WORK')],
      [new M.Name('Bruno')],
    )],
    ['interactive button', new M.Interactive(new M.ActionButtons(new M.Button('yes', 'Sí'), new M.Button('no', 'No'), new M.Button('later', 'Later')),
      new M.Body('Confirm?'), new M.Header('Order 42'), new M.Footer('Reply below'))],
    ['interactive button with an image header', new M.Interactive(new M.ActionButtons(new M.Button('ok', 'OK')), new M.Body('Look'), new M.Header(png))],
    ['interactive list (10 rows in two sections)', new M.Interactive(new M.ActionList('Menu',
      new M.ListSection('Drinks', ...rows('d', 5, 'cold')), new M.ListSection('Food', ...rows('f', 5)),
    ), new M.Body('Pick one'))],
    ['interactive cta_url', new M.Interactive(new M.ActionCTA('Open', 'https://example.com/track'), new M.Body('Track it'), new M.Header('Shipped'))],
    ['reaction', new M.Reaction('wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI', '👍')],
    ['reaction removed (empty emoji)', new M.Reaction('wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI')],
    ['template with header, body and buttons, language policy', new M.Template('order_update', new M.Language('pt_BR', 'deterministic'),
      new M.HeaderComponent(new M.HeaderParameter(png)),
      new M.BodyComponent(new M.BodyParameter('Ana'), new M.BodyParameter(new M.Currency(12_500, 'USD', '$12.50')), new M.BodyParameter(new M.DateTime('1 de janeiro'))),
      new M.PayloadComponent('STOP'), new M.URLComponent('track/42'))],
    ['template with named parameters', new M.Template('welcome', 'en_US', new M.HeaderComponent(new M.HeaderParameter('Hi', 'title')),
      new M.BodyComponent(new M.BodyParameter('Ana', 'first_name'), new M.BodyParameter(new M.Currency(1000, 'EUR', '1 €'), 'amount')))],
    ['template with document and video headers', new M.Template('docs', 'en',
      new M.HeaderComponent(new M.HeaderParameter(new M.Document('1234567890', true, undefined, 'invoice.pdf'))))],
    ['template with a video header', new M.Template('clip', 'en', new M.HeaderComponent(new M.HeaderParameter(new M.Video('https://example.com/v.mp4', false))))],
  ];
  for (const [name, message] of messages) {
    const answer = await api.sendMessage(PHONE_ID, TO, message, 'wamid.CONTEXT', 'opaque-42') as Record<string, any>;
    t.match(answer, { messaging_product: 'whatsapp', contacts: [{ input: TO, wa_id: TO }], messages: [{ id: /^wamid\./ }] }, name);
    t.notOk('error' in answer, `${name}: no error`);
    const sent = lastBody(sandbox);
    t.match(sent, { context: { message_id: 'wamid.CONTEXT' }, biz_opaque_callback_data: 'opaque-42', type: message._type }, `${name}: as the SDK sent it`);
  }
  t.ok(urls.every((u) => u.startsWith(`${sandbox.url}/v23.0/${PHONE_ID}/messages`)), 'the versioned path');
  const sentTypes = sandbox.requests.map((r) => JSON.parse(r.body).type);
  t.same([...new Set(sentTypes)], ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts', 'interactive', 'reaction', 'template']);
  t.equal(typeof JSON.parse(sandbox.requests.find((r) => r.body.includes('"contacts"'))!.body).contacts, 'string', 'the SDK sends contacts JSON-encoded');
  const template = sandbox.requests.map((r) => JSON.parse(r.body)).find((b) => b.type === 'template')!;
  t.match(template.template, { language: { policy: 'deterministic' }, components: [{ type: 'header' }, { type: 'body' }, { type: 'button', index: 0 }, { type: 'button', index: 1 }] });

  t.same(await api.markAsRead(PHONE_ID, 'wamid.INBOUND'), { success: true }, 'mark read');
  t.same(await api.markAsRead(PHONE_ID, 'wamid.INBOUND', 'text'), { success: true }, 'mark read with the typing indicator');
  t.same(lastBody(sandbox), { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.INBOUND', typing_indicator: { type: 'text' } });
});

t.test('refusals come back in the network error shape the SDK returns, naming the field', async (t) => {
  const { api } = await client(t);
  const M = await builders();
  const rows = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => new M.Row(`${prefix}${i}`, `${prefix} ${i}`)) as [InstanceType<typeof M.Row>, ...InstanceType<typeof M.Row>[]];
  const tooManyRows = new M.Interactive(new M.ActionList('Menu',
    new M.ListSection('A', ...rows('a', 6)), new M.ListSection('B', ...rows('b', 5)),
  ), new M.Body('Pick'));
  const list = await api.sendMessage(PHONE_ID, TO, tooManyRows) as Record<string, any>;
  t.match(list, { error: { code: 100, type: 'OAuthException', message: '(#100) Invalid parameter', error_data: { details: /^interactive\.action\.sections: 11 rows/ }, fbtrace_id: String } });
  const currency = await api.sendMessage(PHONE_ID, TO, new M.Template('t', 'en', new M.BodyComponent(new M.BodyParameter(new M.Currency(1, 'usd', '1'))))) as Record<string, any>;
  t.match(currency, { error: { code: 100, error_data: { details: "template.components[0].parameters[0].currency.code: Expected string to match '^[A-Z]{3}$'" } } });
  const location = await api.sendMessage(PHONE_ID, TO, new M.Location(200, 10)) as Record<string, any>;
  t.match(location, { error: { code: 100, error_data: { details: /^location\.longitude: Expected number to be less or equal to 180/ } } });
  const otherNumber = await api.sendMessage('999', TO, new M.Text('hi')) as Record<string, any>;
  t.match(otherNumber, { error: { code: 100, error_subcode: 33 } });
});

t.test('media: upload a form, retrieve, download with the token only, delete', async (t) => {
  const { sandbox, api } = await client(t);
  const bytes = Buffer.from('\x89PNG\r\n\x1a\n fake image bytes ✓', 'utf8');
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'photo.png');
  const uploaded = await api.uploadMedia(PHONE_ID, form) as Record<string, any>;
  t.match(uploaded, { id: /^[0-9]+$/ });

  const info = await api.retrieveMedia(uploaded.id, PHONE_ID) as Record<string, any>;
  t.same(Object.keys(info).sort(), ['file_size', 'id', 'messaging_product', 'mime_type', 'sha256', 'url']);
  t.match(info, { id: uploaded.id, mime_type: 'image/png', file_size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  t.ok(info.url.startsWith(sandbox.url), 'a URL on the sandbox');
  const download = await api.fetchMedia(info.url);
  t.equal(download.status, 200);
  t.equal(download.headers.get('content-type'), 'image/png');
  t.same(Buffer.from(await download.arrayBuffer()), bytes);
  const anonymous = await fetch(info.url);
  t.equal(anonymous.status, 401, 'no token, no file');
  t.match(await anonymous.json(), { error: { code: 190 } });
  const wrongKey = await fetch(info.url.replace(/key=\w+/, 'key=0'), { headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(wrongKey.status, 400);
  await wrongKey.body?.cancel();

  t.same(await api.deleteMedia(uploaded.id, PHONE_ID), { success: true });
  t.match(await api.retrieveMedia(uploaded.id), { error: { code: 100, error_subcode: 33 } });
  t.equal((await fetch(info.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 400, 'gone after delete');
});

/** A webhook endpoint that hands every raw callback and its signature to the SDK's own post handling. */
async function sdkWebhook(t: Teardown, WhatsAppAPI: SDK['WhatsAppAPI']) {
  const receiver = new WhatsAppAPI({ token: 'unused', appSecret: SECRET });
  const seen = { raws: [] as string[], messages: [] as Record<string, any>[], statuses: [] as Record<string, any>[], refused: 0 };
  receiver.on.message = ({ message }) => void seen.messages.push(message);
  receiver.on.status = ({ status, id, biz_opaque_callback_data }) => void seen.statuses.push({ status, id, biz_opaque_callback_data });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      seen.raws.push(raw);
      receiver.post(JSON.parse(raw), raw, String(req.headers['x-hub-signature-256']))
        .then(() => res.writeHead(200).end(), () => { seen.refused += 1; res.writeHead(401).end(); });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, seen, receiver };
}

t.test('the SDK verifies the sandbox callbacks: statuses, and inbound text and media with accents and emoji', async (t) => {
  const { WhatsAppAPI } = await sdk();
  const hook = await sdkWebhook(t, WhatsAppAPI);
  const { sandbox, api } = await client(t, { webhookUrl: hook.url });
  const M = await builders();
  const sent = await api.sendMessage(PHONE_ID, TO, new M.Text('Olá'), undefined, 'order-7') as Record<string, any>;
  await sandbox.settled();
  t.same(hook.seen.statuses, ['sent', 'delivered', 'read'].map((status) => ({ status, id: sent.messages[0].id, biz_opaque_callback_data: 'order-7' })));

  const text = 'Olá, ñandú café 😀👍🏽 “quotes”';
  const inbound = await sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, name: 'José Ñúñez', text });
  t.equal(inbound.status, 200, 'the SDK accepted the signature');
  const raw = hook.seen.raws.at(-1)!;
  t.ok(/^[\x20-\x7e]*$/.test(raw), 'the posted bytes are printable ASCII only');
  t.ok(raw.includes('Ol\\u00e1') && raw.includes('\\ud83d\\ude00') && raw.includes('Jos\\u00e9'), 'lowercase \\uXXXX, emoji as surrogate pairs');
  t.match(hook.seen.messages.at(-1), { type: 'text', text: { body: text }, id: inbound.wamid });

  const form = new FormData();
  form.append('file', new Blob(['%PDF-1.4 contrato'], { type: 'application/pdf' }), 'contrato.pdf');
  const { id } = await api.uploadMedia(PHONE_ID, form) as { id: string };
  const withDocument = await sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, media: { type: 'document', id, caption: 'Contrato assinado ✍️', filename: 'contrato.pdf' } });
  t.equal(withDocument.status, 200);
  const document = hook.seen.messages.at(-1)!;
  t.match(document, { type: 'document', document: { id, mime_type: 'application/pdf', caption: 'Contrato assinado ✍️', filename: 'contrato.pdf' } });
  const info = await api.retrieveMedia(document.document.id) as Record<string, any>;
  t.equal(Buffer.from(info.sha256, 'hex').toString('base64'), document.document.sha256, 'the callback sha256 (base64) is the lookup sha256 (hex)');

  const image = await sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, media: { type: 'image', data: Buffer.from('png!').toString('base64'), mime_type: 'image/png', caption: 'Foto 📷' } });
  t.equal(image.status, 200);
  t.match(hook.seen.messages.at(-1), { type: 'image', image: { mime_type: 'image/png', caption: 'Foto 📷', id: /^[0-9]+$/ } });
  t.equal(hook.seen.refused, 0);

  // The SDK's check can fail: a body changed after signing, or another secret.
  const delivery = sandbox.deliveries.at(-1)!;
  t.ok(await hook.receiver.verifyRequestSignature(delivery.body, delivery.signature!));
  t.notOk(await hook.receiver.verifyRequestSignature(delivery.body.replace('Foto', 'Fota'), delivery.signature!));
  const other = new WhatsAppAPI({ token: 'x', appSecret: 'another-secret' });
  t.notOk(await other.verifyRequestSignature(delivery.body, delivery.signature!));
});
