// POST /api/media: one multipart file part streamed to the user's network account; kinds and limits by MIME type,
// 413/415/400 before or instead of a complete upload, no credit, and the id then sends media.
import { PassThrough } from 'node:stream';
import t from 'tap';
import type { App } from '../src/app';
import { createUploadTurns } from '../src/services/upload-fairness';
import { PHONE_ID, sendingApp, TO, TOKEN } from './fixtures/sending';
import { bearer, createUser } from './helper';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const fixedClock = { options: { now: () => NOW } };
const KiB = 1024;
const MiB = 1024 * KiB;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Part { name: string; filename?: string; type?: string; data: Buffer | string }
/** A multipart/form-data body as a browser or curl sends it. */
function form(parts: Part[]) {
  const boundary = '----test-boundary-7MA4YWxkTrZu0gW';
  const chunks = parts.flatMap((p) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}\r\n`
      + (p.type === undefined ? '' : `Content-Type: ${p.type}\r\n`) + '\r\n'),
    Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'),
  ]);
  return { payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
const file = (bytes: number, type: string, filename = 'f.bin'): Part =>
  ({ name: 'file', filename, type, data: Buffer.concat([PNG_SIGNATURE, Buffer.alloc(Math.max(0, bytes - 8), 7)]).subarray(0, bytes) });

async function setup(t: Parameters<typeof sendingApp>[0]) {
  const ctx = await sendingApp(t, fixedClock);
  const upload = (parts: Part[], headers: Record<string, string> = ctx.auth) => {
    const body = form(parts);
    return ctx.app.inject({ method: 'POST', url: '/api/media', headers: { ...headers, ...body.headers }, payload: body.payload });
  };
  const uploads = () => ctx.sandbox.requests.filter((r) => r.path.endsWith('/media'));
  return { ...ctx, upload, uploads };
}

t.test('a png over the JSON body limit: 201 {id, mime_type, file_size}, and the network then serves exactly those bytes', async (t) => {
  const { upload, uploads, sandbox, app, user } = await setup(t);
  const png = file(300 * KiB, 'image/png', 'parcel.png');
  const res = await upload([png]);
  t.equal(res.statusCode, 201);
  const answer = res.json();
  t.same(answer, { id: answer.id, mime_type: 'image/png', file_size: 300 * KiB });
  t.equal(uploads().length, 1);
  t.equal(uploads()[0]!.path, `/v23.0/${PHONE_ID}/media`);
  t.equal(uploads()[0]!.headers.authorization, `Bearer ${TOKEN}`);

  const info = await (await fetch(`${sandbox.url}/v23.0/${answer.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as { url: string; mime_type: string; file_size: number };
  t.match(info, { mime_type: 'image/png', file_size: 300 * KiB });
  const bytes = Buffer.from(await (await fetch(info.url, { headers: { authorization: `Bearer ${TOKEN}` } })).arrayBuffer());
  t.ok(bytes.equals(png.data as Buffer), 'the same bytes');
  t.equal(sandbox.media.get(answer.id)!.filename, 'parcel.png');
  t.equal(app.creditsRepo.used(user.id, '2026-03'), 0, 'uploads cost no credit');

  const sent = await app.inject({ method: 'POST', url: '/api/message/send', headers: bearer(app, user), payload: {
    to: TO, type: 'image', image: { id: answer.id, caption: 'Your parcel' } } });
  t.equal(sent.statusCode, 201, 'sent by the uploaded id');
  t.same(JSON.parse(sandbox.requests.at(-1)!.body), {
    messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'image', image: { caption: 'Your parcel', id: answer.id } });
});

t.test('a pdf uploads as a document (the MIME type decides, parameters ignored) and sends by id', async (t) => {
  const { upload, post, sandbox } = await setup(t);
  const res = await upload([{ name: 'file', filename: 'invoice "42".pdf', type: 'application/PDF; name=x', data: '%PDF-1.4 minimal' }]);
  t.equal(res.statusCode, 201);
  t.match(res.json(), { mime_type: 'application/pdf', file_size: 16 });
  t.equal(sandbox.media.get(res.json().id)!.mimeType, 'application/pdf');
  const sent = await post('/api/message/send', { to: TO, type: 'document', document: { id: res.json().id, filename: 'invoice.pdf' } });
  t.equal(sent.statusCode, 201);
});

t.test('limits by kind: at the limit 201, one byte over 413 and the network holds no file', async (t) => {
  const { upload, uploads, sandbox } = await setup(t);
  const atLimit = await upload([file(500 * KiB, 'image/webp')]);
  t.equal(atLimit.statusCode, 201, 'a 500 KiB sticker');
  const over = await upload([file(500 * KiB + 1, 'image/webp')]);
  t.same([over.statusCode, over.json()], [413, { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', error: 'Payload Too Large',
    message: `file: over the ${500 * KiB} bytes the network takes for sticker (image/webp)` }]);
  const bigImage = await upload([file(5 * MiB + 1, 'image/jpeg')]);
  t.equal(bigImage.statusCode, 413);
  t.equal(bigImage.json().message, `file: over the ${5 * MiB} bytes the network takes for image (image/jpeg)`);
  // Whatever the network saw of the cut-off bodies, it stored nothing from them: only the first upload exists.
  const stored = uploads().length;
  t.ok(stored >= 1);
  t.ok(sandbox.media.get(atLimit.json().id));
  const after = await upload([file(10, 'image/png')]);
  t.equal(after.statusCode, 201, 'the next upload works');
  t.not(after.json().id, atLimit.json().id);
});

t.test('415 for a type the network does not take, or a body that is not multipart; nothing reaches the network', async (t) => {
  const { upload, uploads, app, auth } = await setup(t);
  const html = await upload([{ name: 'file', filename: 'x.html', type: 'text/html', data: '<script>alert(1)</script>' }]);
  t.equal(html.statusCode, 415);
  t.equal(html.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  t.match(html.json().message, /^file: "text\/html" is not a media type the network takes; use one of image\/jpeg, /);
  const json = await app.inject({ method: 'POST', url: '/api/media', headers: auth, payload: { file: 'x' } });
  t.same([json.statusCode, json.json().code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
  const plain = await app.inject({ method: 'POST', url: '/api/media', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' });
  t.same([plain.statusCode, plain.json().code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
  t.equal(uploads().length, 0);
  // RFC 7578: a part without Content-Type is text/plain, which the network takes as a document.
  const untyped = await upload([{ name: 'file', filename: 'notes', data: 'no type' }]);
  t.same([untyped.statusCode, untyped.json().mime_type], [201, 'text/plain']);
});

t.test('400 for no file, a field, two files, another part name or an empty file; 401 without a session', async (t) => {
  const { upload, uploads, app } = await setup(t);
  const oneFile = 'Send multipart/form-data with exactly one part: the file, named "file"';
  const cases: Array<[string, Part[], string]> = [
    ['no part at all', [], oneFile],
    ['only a field', [{ name: 'type', data: 'image/png' }], oneFile],
    ['a field before the file', [{ name: 'type', data: 'image/png' }, file(10, 'image/png')], oneFile],
    ['a file named otherwise', [{ ...file(10, 'image/png'), name: 'upload' }], oneFile],
    ['an empty file', [file(0, 'image/png')], 'file: the file is empty'],
  ];
  for (const [name, parts, message] of cases) {
    const res = await upload(parts);
    t.same([res.statusCode, res.json().message], [400, message], name);
  }
  const two = await upload([file(10, 'image/png'), file(10, 'image/png')]);
  t.same([two.statusCode, two.json().message], [400, oneFile], 'two files');
  t.equal(uploads().filter((r) => r.body !== '').length <= 1, true, 'at most the first of two files went out');
  const anonymous = await upload([file(10, 'image/png')], {});
  t.equal(anonymous.statusCode, 401);
});

t.test('the network refusing the upload: 502 MESSAGING_REJECTED with upstream; 409 without messaging configured', async (t) => {
  const { app, upload } = await setup(t);
  const stranger = await createUser(app, { email: 'bo@example.com', messagingToken: 'EAA-unknown-token', messagingPhoneNumberId: '999000111' });
  const refused = await upload([file(10, 'image/png')], bearer(app, stranger));
  t.equal(refused.statusCode, 502);
  t.match(refused.json(), { code: 'MESSAGING_REJECTED', upstream: { http_status: 401, code: 190 } });
  t.notOk(refused.body.includes('EAA-unknown-token'));
  const unconfigured = await createUser(app, { email: 'cy@example.com' });
  const res = await upload([file(10, 'image/png')], bearer(app, unconfigured));
  t.same([res.statusCode, res.json().code], [409, 'MESSAGING_NOT_CONFIGURED']);
});

/** An upload whose file part arrives as the test writes it: `more(n)` sends n more bytes, `end()` completes it. */
function trickle(app: App, headers: Record<string, string>) {
  const boundary = '----trickle-boundary-7MA4YWxk';
  const body = new PassThrough();
  body.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n`);
  body.write(PNG_SIGNATURE);
  const answer = app.inject({ method: 'POST', url: '/api/media', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
  return {
    answer,
    more: (bytes: number) => body.write(Buffer.alloc(bytes, 7)),
    end: () => body.end(`\r\n--${boundary}--\r\n`),
  };
}
const until = async (done: () => boolean) => {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

t.test("one CLIENT's trickling uploads: a third is 429 TOO_MANY_UPLOADS; another user's small upload completes meanwhile", async (t) => {
  const turns = createUploadTurns();
  const ctx = await sendingApp(t, { ...fixedClock, options: { ...fixedClock.options, uploads: { turns } } });
  ctx.sandbox.addAccount({ phoneNumberId: '2002', token: 'EAA-bob-token' });
  const bob = await createUser(ctx.app, { email: 'bob@example.com', messagingToken: 'EAA-bob-token', messagingPhoneNumberId: '2002' });
  const order: string[] = [];
  const slow = [trickle(ctx.app, ctx.auth), trickle(ctx.app, ctx.auth)];
  slow.forEach((s, i) => void s.answer.then(() => order.push(`trickle${i}`)));
  await until(() => turns.inFlight(ctx.user.id) === 2);
  t.equal(turns.inFlight(ctx.user.id), 2, 'both trickles under way');
  for (const s of slow) s.more(100);
  const body = form([file(14, 'image/png')]);
  const third = await ctx.app.inject({ method: 'POST', url: '/api/media', headers: { ...ctx.auth, ...body.headers }, payload: body.payload });
  t.equal(third.statusCode, 429);
  t.same(third.json(), { statusCode: 429, code: 'TOO_MANY_UPLOADS', error: 'Too Many Requests', message: 'At most 2 uploads at once per user; retry once one has finished' });
  t.equal(third.headers['retry-after'], '5');
  const bobs = await ctx.app.inject({ method: 'POST', url: '/api/media', headers: { ...bearer(ctx.app, bob), ...body.headers }, payload: body.payload });
  order.push('bob');
  t.equal(bobs.statusCode, 201, "the other user's 14-byte upload");
  t.match(bobs.json(), { id: /^\d+$/, mime_type: 'image/png', file_size: 14 });
  for (const s of slow) s.end();
  const answers = await Promise.all(slow.map((s) => s.answer));
  t.same(answers.map((a) => a.statusCode), [201, 201], 'the trickles complete too');
  t.equal(order[0], 'bob', 'answered before either trickle ended');
  t.equal(turns.inFlight(ctx.user.id), 0, 'turns given back');
  const after = await ctx.app.inject({ method: 'POST', url: '/api/media', headers: { ...ctx.auth, ...body.headers }, payload: body.payload });
  t.equal(after.statusCode, 201, 'the user uploads again once the trickles are over');
});

t.test('an upload that sends less than the floor over a window is stopped: 408 UPLOAD_TOO_SLOW, the turn given back', async (t) => {
  const turns = createUploadTurns();
  // A 200 ms window at 16 KB/s: at least 3,276.8 bytes per window.
  const ctx = await sendingApp(t, { ...fixedClock, options: { ...fixedClock.options, uploads: { turns, pace: { windowMs: 200 } } } });
  const slow = trickle(ctx.app, ctx.auth);
  slow.more(100);
  const answer = await slow.answer;
  t.equal(answer.statusCode, 408);
  t.same(answer.json(), { statusCode: 408, code: 'UPLOAD_TOO_SLOW', error: 'Request Timeout', message: 'The upload sent less than 16384 bytes per second for 0.2 s and was stopped' });
  t.equal(turns.inFlight(ctx.user.id), 0);
  t.equal(ctx.sandbox.requests.filter((r) => r.path.endsWith('/media')).length, 0, 'the network got no complete upload');
  // Fast enough: well over the floor every window.
  const body = form([file(64 * KiB, 'image/png')]);
  const fast = await ctx.app.inject({ method: 'POST', url: '/api/media', headers: { ...ctx.auth, ...body.headers }, payload: body.payload });
  t.equal(fast.statusCode, 201);
});
