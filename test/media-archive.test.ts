// The inbound media archive against the sandbox over loopback: downloads in the background, sha256 and size checks,
// retries, final refusals, a restart mid-download, the media route's authorization and headers, listed fields, files.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { buildApp } from '../src/app';
import type { Config } from '../src/config';
import { bearer, createAdmin, createUser } from './helper';
import { png } from './fixtures/png';
import { PHONE_ID, sendingApp, TO, TOKEN, type Teardown } from './fixtures/sending';
import { deliver, envelope, messageByWamid } from './fixtures/webhooks';

const SECRET = 'media-secret';
type Media = { type: 'image' | 'video' | 'audio' | 'document' | 'sticker'; data?: string; id?: string; mime_type?: string; caption?: string; filename?: string };
interface Download { state: string; attempts: number; nextAttemptAt: number; error: string | null; size: number | null }

/** The app listening (so its worker runs), the sandbox posting signed callbacks to it, and a clock tests move. */
async function archive(t: Teardown, config: Partial<Config> = {}) {
  let clock = Date.now();
  const ctx = await sendingApp(t, { config: { messagingAppSecret: SECRET, ...config }, options: { now: () => new Date(clock) } });
  const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  ctx.sandbox.configureCallbacks({ webhookUrl: `${base}/api/messaging/webhook`, appSecret: SECRET, enabled: true, delayMs: 0 });
  const inbound = async (media: Media) => {
    const delivery = await ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from: TO, media });
    if (delivery.status !== 200) throw new Error(`webhook answered ${delivery.status}`);
    return messageByWamid(ctx.app, delivery.wamid)!.id;
  };
  const download = (id: number) => ctx.app.db.$client.prepare(`SELECT state, attempts, next_attempt_at AS nextAttemptAt, error, size
    FROM media_downloads WHERE message_id = ?`).get(id) as Download | undefined;
  /** Waits (a deadline only to fail instead of hanging) until the download is no longer in the state given. */
  async function until(id: number, done: (row: Download) => boolean): Promise<Download> {
    for (let i = 0; i < 400; i++) {
      const row = download(id);
      if (row && done(row)) return row;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`download ${id} stayed ${JSON.stringify(download(id))}`);
  }
  const media = (id: number, headers = ctx.auth) => ctx.app.inject({ method: 'GET', url: `/api/media/${id}`, headers });
  const listed = async (id: number) => {
    const answer = await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations`, headers: ctx.auth });
    return answer.json()[0].messages.find((m: { id: number }) => m.id === id).media;
  };
  /** Uploads a file to the sandbox as the account (for inbound messages that reuse it, or whose bytes a test corrupts). */
  async function upload(bytes: Buffer, type: string): Promise<string> {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('file', new Blob([bytes], { type }), 'f');
    const answer = await fetch(`${ctx.sandbox.url}/v23.0/${PHONE_ID}/media`, { method: 'POST', body: form, headers: { authorization: `Bearer ${TOKEN}` } });
    return ((await answer.json()) as { id: string }).id;
  }
  return { ...ctx, inbound, download, until, media, listed, upload, advance: (ms: number) => void (clock += ms), now: () => clock };
}

const b64 = (bytes: Buffer) => bytes.toString('base64');

t.test('an inbound image is downloaded in the background, sha256 checked, stored 0600 in media/ (0700) and served inline', async (t) => {
  const ctx = await archive(t);
  const image = png(4, 3);
  const id = await ctx.inbound({ type: 'image', data: b64(image), mime_type: 'image/png', caption: 'Foto' });
  const row = await ctx.until(id, (r) => r.state !== 'pending');
  t.match(row, { state: 'stored', attempts: 1, error: null, size: image.length });
  const file = join(ctx.app.mediaFiles.dir, String(id));
  t.same(readFileSync(file), image);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(statSync(ctx.app.mediaFiles.dir).mode & 0o777, 0o700);
  const answer = await ctx.media(id);
  t.equal(answer.statusCode, 200);
  t.same(answer.rawPayload, image);
  t.equal(answer.headers['content-type'], 'image/png');
  t.equal(answer.headers['content-length'], String(image.length));
  t.equal(answer.headers['x-content-type-options'], 'nosniff');
  t.equal(answer.headers['content-disposition'], `inline; filename="image-${id}.png"`);
  t.notMatch(String(answer.headers['content-security-policy']), /sandbox/);
  const listed = await ctx.listed(id);
  t.match(listed.id, /^[0-9]+$/);
  t.same(listed, { id: listed.id, mime_type: 'image/png', sha256: b64(createHash('sha256').update(image).digest()), filename: null, stored: true, url: `/api/media/${id}`, error: null });
  const lookups = ctx.sandbox.requests.filter((r) => r.method === 'GET');
  t.equal(lookups.length, 1, 'one lookup');
  t.equal(lookups[0]!.headers.authorization, `Bearer ${TOKEN}`, "with the user's token");
});

t.test('before the download (the worker not running) the message lists stored:false and the route answers MEDIA_NOT_STORED', async (t) => {
  const ctx = await sendingApp(t, { config: { messagingAllowUnsigned: true } });
  const item = { from: TO, id: 'wamid.img1', timestamp: String(Math.floor(Date.now() / 1000)), type: 'image', image: { id: '777', mime_type: 'image/jpeg', sha256: b64(Buffer.alloc(32, 1)) } };
  t.equal((await deliver(ctx.app, envelope(PHONE_ID, { messages: [item] }))).statusCode, 200);
  const id = messageByWamid(ctx.app, 'wamid.img1')!.id;
  t.same(ctx.app.db.$client.prepare('SELECT state, attempts FROM media_downloads WHERE message_id = ?').get(id), { state: 'pending', attempts: 0 }, 'queued in the webhook write');
  const answer = await ctx.app.inject({ method: 'GET', url: `/api/media/${id}`, headers: ctx.auth });
  t.equal(answer.statusCode, 404);
  t.equal(answer.json().code, 'MEDIA_NOT_STORED');
  const list = await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations`, headers: ctx.auth });
  t.match(list.json()[0].messages[0].media, { id: '777', stored: false, url: null, error: null });
  t.equal(ctx.sandbox.requests.length, 0, 'nothing fetched inside the webhook request');
  // A text message queues nothing.
  await deliver(ctx.app, envelope(PHONE_ID, { messages: [{ from: TO, id: 'wamid.t', timestamp: item.timestamp, type: 'text', text: { body: 'x' } }] }));
  t.equal(ctx.app.db.$client.prepare('SELECT count(*) FROM media_downloads').pluck().get(), 1);
});

t.test('5xx and 429 from the lookup or the download are retried with growing waits, then it is stored', async (t) => {
  const ctx = await archive(t);
  ctx.sandbox.media.enqueue({ stage: 'lookup', fail: 'service_unavailable' }, { stage: 'download', fail: 'throttled' }, { stage: 'lookup', fail: 'server_error' });
  const image = png(2, 2);
  const id = await ctx.inbound({ type: 'image', data: b64(image), mime_type: 'image/png' });
  const waits: number[] = [];
  for (let failures = 1; failures <= 3; failures++) {
    const row = await ctx.until(id, (r) => r.attempts === failures);
    t.equal(row.state, 'pending');
    t.match(row.error, /HTTP (503|429|500)/);
    waits.push(row.nextAttemptAt - ctx.now());
    ctx.advance(3_600_000);
  }
  t.ok(waits[0]! > 0 && waits[0]! <= 2_000, 'the first retry within seconds');
  t.ok(waits[2]! > 0 && waits[2]! <= 8_000, 'then growing (capped)');
  const row = await ctx.until(id, (r) => r.state !== 'pending');
  t.match(row, { state: 'stored', attempts: 4, error: null });
  t.same((await ctx.media(id)).rawPayload, image);
  const metrics = await ctx.app.metrics.registry.metrics();
  t.match(metrics, /gateway_media_downloads\{outcome="stored"\} 1\n/, 'metrics: one stored');
  t.match(metrics, /gateway_media_downloads\{outcome="retried"\} 3\n/, 'metrics: three retries');
});

t.test('a 429 whose Retry-After is an HTTP date: the next attempt is scheduled at that date, not sooner', async (t) => {
  const ctx = await archive(t);
  // An hour ahead of the app's clock, in the IMF-fixdate form (whole seconds).
  const date = new Date(ctx.now() + 3_600_000).toUTCString();
  ctx.sandbox.media.enqueue({ stage: 'lookup', fail: 'throttled', retryAfter: date });
  const id = await ctx.inbound({ type: 'image', data: b64(png(1, 1)), mime_type: 'image/png' });
  const row = await ctx.until(id, (r) => r.attempts === 1);
  t.match(row, { state: 'pending', error: /HTTP 429/ });
  t.ok(row.nextAttemptAt >= Date.parse(date), `next attempt ${new Date(row.nextAttemptAt).toISOString()} is not before ${date}`);
  t.ok(row.nextAttemptAt < Date.parse(date) + 1_000, 'and is that date (to the second), not a backoff on top of it');
});

t.test('still failing 24 h after the first attempt: failed for good with error unavailable', async (t) => {
  const ctx = await archive(t);
  ctx.sandbox.media.enqueue({ stage: 'lookup', fail: 'server_error' }, { stage: 'lookup', fail: 'server_error' });
  const id = await ctx.inbound({ type: 'image', data: b64(png(1, 1)), mime_type: 'image/png' });
  await ctx.until(id, (r) => r.attempts === 1);
  ctx.advance(25 * 3_600_000);
  const row = await ctx.until(id, (r) => r.state !== 'pending');
  t.match(row, { state: 'failed', error: 'unavailable' });
  t.match(await ctx.listed(id), { stored: false, url: null, error: 'unavailable' });
});

t.test('a 4xx from the lookup or the download is final at once', async (t) => {
  const ctx = await archive(t);
  ctx.sandbox.media.enqueue({ stage: 'lookup', fail: 'unknown_object' });
  const first = await ctx.inbound({ type: 'image', data: b64(png(1, 1)), mime_type: 'image/png' });
  t.match(await ctx.until(first, (r) => r.state !== 'pending'), { state: 'failed', attempts: 1, error: 'lookup_refused' });
  ctx.sandbox.media.enqueue({ stage: 'download', fail: 'bad_token' });
  const second = await ctx.inbound({ type: 'audio', data: b64(Buffer.from('OggS-audio')), mime_type: 'audio/ogg' });
  t.match(await ctx.until(second, (r) => r.state !== 'pending'), { state: 'failed', attempts: 1, error: 'download_refused' });
  t.match(await ctx.listed(second), { stored: false, url: null, error: 'download_refused' });
  t.equal((await ctx.media(second)).json().code, 'MEDIA_NOT_STORED');
  t.notOk(existsSync(join(ctx.app.mediaFiles.dir, String(second))), 'no file');
});

t.test('a file whose bytes do not match the sha256 is refused, not kept and not served', async (t) => {
  const ctx = await archive(t);
  const mediaId = await ctx.upload(png(2, 2), 'image/png');
  // The network now serves other bytes under the same announced sha256.
  ctx.sandbox.media.get(mediaId)!.bytes = Buffer.from('<svg onload=alert(1)>');
  const id = await ctx.inbound({ type: 'image', id: mediaId });
  t.match(await ctx.until(id, (r) => r.state !== 'pending'), { state: 'failed', error: 'sha256_mismatch', size: null });
  t.same(ctx.app.mediaFiles.list(), { stored: [], parts: [] }, 'the bytes are not kept');
  t.equal((await ctx.media(id)).statusCode, 404);
});

t.test('a file over MEDIA_MAX_BYTES is refused without being kept', async (t) => {
  const ctx = await archive(t, { mediaMaxBytes: 100 });
  const id = await ctx.inbound({ type: 'document', data: b64(Buffer.alloc(101, 65)), mime_type: 'text/plain', filename: 'big.txt' });
  t.match(await ctx.until(id, (r) => r.state !== 'pending'), { state: 'failed', error: 'too_large' });
  t.same(ctx.app.mediaFiles.list(), { stored: [], parts: [] });
  const small = await ctx.inbound({ type: 'document', data: b64(Buffer.alloc(100, 65)), mime_type: 'text/plain', filename: 'ok.txt' });
  t.match(await ctx.until(small, (r) => r.state !== 'pending'), { state: 'stored', size: 100 }, 'exactly the limit is fine');
});

t.test('a restart mid-download resumes it: the new app on the same database completes it', async (t) => {
  const ctx = await archive(t);
  ctx.sandbox.media.enqueue({ stage: 'download', delayMs: 60_000 });
  const image = png(3, 3);
  const id = await ctx.inbound({ type: 'image', data: b64(image), mime_type: 'image/png' });
  for (let i = 0; i < 400 && ctx.app.mediaDownloads.stats().active === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.equal(ctx.app.mediaDownloads.stats().active, 1, 'under way');
  await ctx.app.close();
  t.same(ctx.app.mediaFiles.list(), { stored: [], parts: [] }, 'no file, not even a partial one');
  const again = await buildApp(ctx.app.config, { logStream: new PassThrough() });
  t.teardown(() => again.close());
  t.match(again.db.$client.prepare('SELECT state, attempts FROM media_downloads WHERE message_id = ?').get(id), { state: 'pending', attempts: 0 },
    'still queued, the cut attempt not counted');
  await again.listen({ host: '127.0.0.1', port: 0 });
  const read = () => again.db.$client.prepare('SELECT state FROM media_downloads WHERE message_id = ?').pluck().get(id);
  for (let i = 0; i < 400 && read() === 'pending'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(read(), 'stored');
  t.same(readFileSync(join(again.mediaFiles.dir, String(id))), image);
});

t.test('the media route: the owner and an ADMIN read it; another CLIENT gets the 404 of a missing id; no session 401; bad id 400', async (t) => {
  const ctx = await archive(t);
  const id = await ctx.inbound({ type: 'sticker', data: b64(Buffer.from('RIFFxxxxWEBP')), mime_type: 'image/webp' });
  await ctx.until(id, (r) => r.state === 'stored');
  const admin = await createAdmin(ctx.app);
  const other = await createUser(ctx.app, { email: 'bob@example.com' });
  t.equal((await ctx.media(id)).statusCode, 200);
  t.equal((await ctx.media(id, bearer(ctx.app, admin))).statusCode, 200);
  const foreign = await ctx.media(id, bearer(ctx.app, other));
  const missing = await ctx.media(999_999, bearer(ctx.app, other));
  t.equal(foreign.statusCode, 404);
  t.same(foreign.json(), { statusCode: 404, code: 'MESSAGE_NOT_FOUND', error: 'Not Found', message: 'Message not found' });
  t.same(foreign.json(), missing.json(), 'exactly the answer of an id that does not exist');
  t.same(Object.keys(foreign.headers).filter((h) => h !== 'x-request-id' && h !== 'date').sort(),
    Object.keys(missing.headers).filter((h) => h !== 'x-request-id' && h !== 'date').sort(), 'and the same headers');
  t.equal(foreign.headers['content-length'], missing.headers['content-length']);
  t.equal((await ctx.media(id, {} as never)).statusCode, 401);
  t.equal((await ctx.media(999_999)).json().code, 'MESSAGE_NOT_FOUND');
  t.equal((await ctx.app.inject({ method: 'GET', url: '/api/media/abc', headers: ctx.auth })).statusCode, 400);
});

t.test('hostile names and types: no path in the filename, attachment with CSP sandbox for anything not shown inline', async (t) => {
  const ctx = await archive(t);
  const pdf = await ctx.inbound({ type: 'document', data: b64(Buffer.from('%PDF-1.4')), mime_type: 'application/pdf', filename: '../../evil".html\r\nX-Injected: 1 Relatório ✓.pdf' });
  await ctx.until(pdf, (r) => r.state === 'stored');
  const answer = await ctx.media(pdf);
  const disposition = String(answer.headers['content-disposition']);
  t.equal(disposition, `attachment; filename="evil.htmlX-Injected 1 Relat_rio _.pdf"; filename*=UTF-8''evil.htmlX-Injected%201%20Relat%C3%B3rio%20%E2%9C%93.pdf`);
  t.notMatch(disposition, /[/\\\r\n]|\.\./);
  t.equal(answer.headers['x-injected'], undefined);
  t.match(String(answer.headers['content-security-policy']), /sandbox/);
  // The same png announced as SVG (an "image") and as HTML: served as attachments the browser never runs.
  const pngId = await ctx.upload(png(1, 1), 'image/png');
  for (const [type, mime] of [['image', 'image/svg+xml'], ['document', 'text/html']] as const) {
    const id = await ctx.inbound({ type, id: pngId, mime_type: mime, ...(type === 'document' ? { filename: '../../evil.html' } : {}) });
    await ctx.until(id, (r) => r.state === 'stored');
    const served = await ctx.media(id);
    t.equal(served.headers['content-type'], mime);
    t.match(String(served.headers['content-disposition']), /^attachment; filename="[^"/]+"$/);
    t.match(String(served.headers['content-security-policy']), /^sandbox/);
    t.equal(served.headers['x-content-type-options'], 'nosniff');
  }
});

t.test('the admin thread shows a stored image inline, plays audio, links a document and labels media not stored', async (t) => {
  const ctx = await archive(t);
  const image = await ctx.inbound({ type: 'image', data: b64(png(8, 6)), mime_type: 'image/png', caption: 'Vitrine' });
  const audio = await ctx.inbound({ type: 'audio', data: b64(Buffer.from('OggS')), mime_type: 'audio/ogg' });
  const pdf = await ctx.inbound({ type: 'document', data: b64(Buffer.from('%PDF')), mime_type: 'application/pdf', filename: 'nota.pdf' });
  for (const id of [image, audio, pdf]) await ctx.until(id, (r) => r.state === 'stored');
  ctx.sandbox.media.enqueue({ stage: 'lookup', fail: 'unknown_object' });
  const gone = await ctx.inbound({ type: 'video', data: b64(Buffer.from('mp4')), mime_type: 'video/mp4' });
  await ctx.until(gone, (r) => r.state === 'failed');
  const admin = await createAdmin(ctx.app);
  const page = await ctx.app.inject({ method: 'GET', url: `/admin/user/${ctx.user.id}/conversation-thread`, headers: { cookie: `token=${ctx.app.issueToken(admin)}` } });
  t.equal(page.statusCode, 200);
  t.match(page.body, new RegExp(`<img class="media media-image" src="/api/media/${image}" alt="Photo: Vitrine"`));
  t.match(page.body, new RegExp(`<audio class="media media-audio" controls preload="metadata" src="/api/media/${audio}">`));
  t.match(page.body, new RegExp(`<a class="media-download" href="/api/media/${pdf}" download>Download document</a>`));
  t.match(page.body, /<p class="media-pending">Not stored: the network no longer has it<\/p>/);
  t.match(String(page.headers['content-security-policy']), /media-src 'self'/);
  t.match(String(page.headers['content-security-policy']), /img-src 'self'/);
  // The page's cookie is what authorises the image request.
  const served = await ctx.app.inject({ method: 'GET', url: `/api/media/${image}`, headers: { cookie: `token=${ctx.app.issueToken(admin)}` } });
  t.equal(served.statusCode, 200);
});

t.test('retention deletes aged messages with their files; deleting a user deletes its files', async (t) => {
  const ctx = await archive(t, { retentionMessagesDays: 1 });
  const old = await ctx.inbound({ type: 'image', data: b64(png(1, 1)), mime_type: 'image/png' });
  await ctx.until(old, (r) => r.state === 'stored');
  // Its age is the network's time of the message: three days ago.
  ctx.app.db.$client.prepare('UPDATE messages SET created_at = created_at - ? WHERE id = ?').run(3 * 86_400_000, old);
  const fresh = await ctx.inbound({ type: 'image', data: b64(png(2, 1)), mime_type: 'image/png' });
  await ctx.until(fresh, (r) => r.state === 'stored');
  t.same(ctx.app.mediaFiles.list().stored.sort(), [old, fresh].sort());
  await ctx.app.retentionSweep.run();
  t.same(ctx.app.mediaFiles.list().stored, [fresh], 'the aged message took its file along');
  t.equal(ctx.download(old), undefined);
  const admin = await createAdmin(ctx.app);
  const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/user/delete/${ctx.user.id}`, headers: bearer(ctx.app, admin) });
  t.equal(deleted.statusCode, 204);
  t.same(ctx.app.mediaFiles.list(), { stored: [], parts: [] }, "the user's files went with it");
});

t.test('a burst of 10 inbound media callbacks while a client polls the listing every 200 ms: all 10 are stored', async (t) => {
  const ctx = await archive(t);
  let polls = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const answer = await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations`, headers: ctx.auth });
      if (answer.statusCode !== 200) throw new Error(`listing answered ${answer.statusCode}`);
      polls += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  t.teardown(() => { polling = false; return poller; });
  const images = Array.from({ length: 10 }, (_, i) => png(i + 1, 2));
  const ids: number[] = [];
  for (const image of images) ids.push(await ctx.inbound({ type: 'image', data: b64(image), mime_type: 'image/png' }));
  // Stored as the listing shows it, polled like the client does (a deadline only to fail instead of hanging).
  const storedCount = async () => {
    const answer = await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations`, headers: ctx.auth });
    return (answer.json()[0].messages as { id: number; media: { stored: boolean } }[]).filter((m) => ids.includes(m.id) && m.media.stored).length;
  };
  let stored = 0;
  for (let i = 0; i < 600 && stored < 10; i++) {
    stored = await storedCount();
    if (stored < 10) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  polling = false;
  await poller;
  t.equal(stored, 10, 'all ten listed as stored');
  t.ok(polls > 0, 'the client polled meanwhile');
  for (const [i, id] of ids.entries()) t.same(readFileSync(join(ctx.app.mediaFiles.dir, String(id))), images[i], `file ${i + 1}`);
});

t.test('the archive cap: a file that would pass it waits as no_space (listed), a smaller one that fits is stored, and once room is back it is', async (t) => {
  const ctx = await archive(t, { mediaArchiveMaxBytes: 150, retentionMessagesDays: 1 });
  const doc = (size: number, name: string) => ctx.inbound({ type: 'document', data: b64(Buffer.alloc(size, 65)), mime_type: 'text/plain', filename: name });
  const first = await doc(100, 'a.txt');
  t.match(await ctx.until(first, (r) => r.state !== 'pending'), { state: 'stored', size: 100 });
  const second = await doc(100, 'b.txt');
  const waiting = await ctx.until(second, (r) => r.error === 'no_space');
  t.match(waiting, { state: 'pending', attempts: 0, size: null }, 'still queued, the attempt not counted');
  t.ok(waiting.nextAttemptAt > ctx.now(), 'tried again later');
  t.match(await ctx.listed(second), { stored: false, url: null, error: 'no_space' });
  t.equal((await ctx.media(second)).json().code, 'MEDIA_NOT_STORED');
  t.same(ctx.app.mediaFiles.list(), { stored: [first], parts: [] }, 'nothing of it written');
  const third = await doc(50, 'c.txt');
  t.match(await ctx.until(third, (r) => r.state !== 'pending'), { state: 'stored', size: 50 }, 'exactly up to the cap');
  t.same(ctx.app.mediaFiles.list().stored.sort(), [first, third].sort());
  // Room comes back: the first message ages out with its file; the waiting one is tried again and stored.
  ctx.app.db.$client.prepare('UPDATE messages SET created_at = created_at - ? WHERE id = ?').run(3 * 86_400_000, first);
  await ctx.app.retentionSweep.run();
  ctx.advance(61_000);
  t.match(await ctx.until(second, (r) => r.state !== 'pending'), { state: 'stored', size: 100, error: null });
  t.match(await ctx.listed(second), { stored: true, url: `/api/media/${second}`, error: null });
});

t.test('below the free-space floor no download starts: no_space, not even a lookup', async (t) => {
  // A floor of 1 TiB: more than the test machine's disk keeps free.
  const ctx = await archive(t, { storageMinFreeMb: 1_048_576 });
  const id = await ctx.inbound({ type: 'image', data: b64(png(1, 1)), mime_type: 'image/png' });
  t.match(await ctx.until(id, (r) => r.error === 'no_space'), { state: 'pending', attempts: 0 });
  t.match(await ctx.listed(id), { stored: false, error: 'no_space' });
  t.equal(ctx.sandbox.requests.filter((r) => r.method === 'GET').length, 0, 'the network was not asked');
  t.same(ctx.app.mediaFiles.list(), { stored: [], parts: [] });
});

t.test('HEAD on a stored file answers its headers and reads no body', async (t) => {
  const ctx = await archive(t);
  const size = 8 * 1024 * 1024;
  const id = await ctx.inbound({ type: 'document', data: b64(Buffer.alloc(size, 66)), mime_type: 'application/pdf', filename: 'big.pdf' });
  await ctx.until(id, (r) => r.state === 'stored');
  // Bytes this process read through read(2) (files, sockets): a HEAD that read the file would add its 8 MB.
  const readBytes = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  const before = readBytes();
  const head = await ctx.app.inject({ method: 'HEAD', url: `/api/media/${id}`, headers: ctx.auth });
  // Fastify's own HEAD would drain the stream after answering: give it every chance to show up.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const read = readBytes() - before;
  t.equal(head.statusCode, 200);
  t.equal(head.body, '');
  t.equal(head.headers['content-length'], String(size));
  t.equal(head.headers['content-type'], 'application/pdf');
  t.match(String(head.headers['content-disposition']), /^attachment; filename="big\.pdf"/);
  t.match(String(head.headers['content-security-policy']), /^sandbox/);
  t.ok(read < size / 2, `read ${read} bytes, not the file's ${size}`);
  t.equal((await ctx.app.inject({ method: 'HEAD', url: '/api/media/999999', headers: ctx.auth })).statusCode, 404);
  const get = await ctx.media(id);
  t.equal(get.rawPayload.length, size, 'GET still streams the file');
});
