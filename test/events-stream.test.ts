// The live stream (server-sent events): a real SSE client resuming across a gateway restart with no gap and no
// duplicate, the frame format and headers, heartbeats, 5 streams per user, a reader that does not read cut off, and
// streams ended by logout, key revocation and disabling the user.
import { connect } from 'node:net';
import { once } from 'node:events';
import { EventSource } from 'eventsource';
import t from 'tap';
import { buildApp, type App, type AppOptions } from '../src/app';
import { bearer, createAdmin, createUser, tempDir, testConfig } from './helper';
import { freePort } from './fixtures/process';
import { deliver, envelope, textItem } from './fixtures/webhooks';

const SECRET = 'stream-secret';
const PHONE = '900000000000021';
type Tap = tap.Test;

async function serve(t: Tap, dir: string, port: number, options: AppOptions = {}): Promise<{ app: App; base: string }> {
  const app = await buildApp(testConfig(dir, { messagingAppSecret: SECRET, port }), options);
  t.teardown(() => app.close());
  await app.listen({ port, host: '127.0.0.1' });
  return { app, base: `http://127.0.0.1:${port}` };
}
let n = 0;
const inbound = (app: App, body: string) => deliver(app, envelope(PHONE, { messages: [textItem(`wamid.s${++n}`, '15551230002', 1_790_000_000, body)] }), SECRET);
const turn = () => new Promise((resolve) => setImmediate(resolve));
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
async function keyFor(app: App, userId: number): Promise<string> {
  const res = await app.inject({ method: 'POST', url: `/api/user/${userId}/keys`, headers: bearer(app, (await app.usersRepo.findById(userId))!), payload: { name: 'sse' } });
  return res.json().key as string;
}

/** Reads a fetch body as text until `done(text)` or the end; the text and whether the stream ended. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<{ text: string; ended: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (chunk.done) return { text, ended: true };
    text += decoder.decode(chunk.value, { stream: true });
    if (done(text)) {
      reader.releaseLock();
      return { text, ended: false };
    }
  }
}

t.test('a real SSE client (eventsource) gets every event once, in order, across a restart of the gateway', async (t) => {
  const dir = tempDir(t);
  const port = await freePort();
  let { app, base } = await serve(t, dir, port);
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const key = await keyFor(app, owner.id);
  await inbound(app, 'before the stream');

  const seen: { id: string; type: string; text: string }[] = [];
  const source = new EventSource(`${base}/api/user/${owner.id}/events/stream?after=0`, {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, authorization: `Bearer ${key}` } }),
  });
  t.teardown(() => source.close());
  source.addEventListener('message.received', (event) => {
    seen.push({ id: event.lastEventId, type: event.type, text: JSON.parse(event.data).data.message.text });
  });
  await until(() => seen.length === 1);
  await inbound(app, 'live');
  await until(() => seen.length === 2);

  await app.close();
  ({ app, base } = await serve(t, dir, port));
  // Committed while the client was away: it resumes after its Last-Event-ID.
  await inbound(app, 'while away');
  await until(() => seen.length === 3);
  await inbound(app, 'after the restart');
  await until(() => seen.length === 4);
  t.same(seen, [
    { id: '1', type: 'message.received', text: 'before the stream' },
    { id: '2', type: 'message.received', text: 'live' },
    { id: '3', type: 'message.received', text: 'while away' },
    { id: '4', type: 'message.received', text: 'after the restart' },
  ]);
});

t.test('frames, headers and heartbeats; Last-Event-ID resumes; 5 streams per user, the 6th gets 429', async (t) => {
  const { app, base } = await serve(t, tempDir(t), await freePort(), { events: { heartbeatMs: 20 } });
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  await inbound(app, 'one');
  await inbound(app, 'two');
  const auth = bearer(app, owner);
  const aborts: AbortController[] = [];
  t.teardown(() => aborts.forEach((a) => a.abort()));
  const open = (headers: Record<string, string> = {}) => {
    const abort = new AbortController();
    aborts.push(abort);
    return fetch(`${base}/api/user/${owner.id}/events/stream`, { headers: { ...auth, ...headers }, signal: abort.signal });
  };
  const res = await open({ 'last-event-id': '1' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.equal(res.headers.get('x-accel-buffering'), 'no');
  t.equal(res.headers.get('cache-control'), 'no-cache');
  t.ok(res.headers.get('x-request-id'));
  const { text } = await readUntil(res.body!, (s) => s.includes(': keep-alive\n\n'));
  const frame = text.split('\n\n').find((block) => block.startsWith('id: '))!;
  const [idLine, eventLine, dataLine] = frame.split('\n');
  t.equal(idLine, 'id: 2', 'resumed after Last-Event-ID 1: event 2 first, no duplicate of 1');
  t.equal(eventLine, 'event: message.received');
  t.match(JSON.parse(dataLine!.slice('data: '.length)), { id: 2, type: 'message.received', data: { message: { text: 'two' } } });
  t.equal(text.split('\n\n').filter((b) => b.startsWith('id: ')).length, 1);

  for (let i = 0; i < 4; i += 1) t.equal((await open()).status, 200);
  const sixth = await open();
  t.equal(sixth.status, 429);
  t.equal(((await sixth.json()) as { code: string }).code, 'TOO_MANY_STREAMS');
  t.equal(app.eventStreams.stats().open, 5);
  const bad = await open({ 'last-event-id': 'abc' });
  t.equal(bad.status, 400);
});

t.test('a stream ends on logout of its session, on revocation of its key, and when the user is disabled', async (t) => {
  const { app, base } = await serve(t, tempDir(t), await freePort());
  const admin = await createAdmin(app);
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const stream = async (authorization: string) => {
    const res = await fetch(`${base}/api/user/${owner.id}/events/stream`, { headers: { authorization } });
    t.equal(res.status, 200);
    return res.body!;
  };
  const session = app.issueToken(owner);
  const other = bearer(app, owner).authorization;
  const bySession = await stream(`Bearer ${session}`);
  const byOther = await stream(other);
  await app.inject({ method: 'POST', url: '/api/logout', headers: { authorization: `Bearer ${session}` } });
  t.equal((await readUntil(bySession, () => false)).ended, true, 'the logged-out session\'s stream ended');

  const key = await keyFor(app, owner.id);
  const byKey = await stream(`Bearer ${key}`);
  await app.inject({ method: 'DELETE', url: `/api/user/${owner.id}/keys/1`, headers: { authorization: other } });
  t.equal((await readUntil(byKey, () => false)).ended, true, 'the revoked key\'s stream ended');
  t.equal(app.eventStreams.stats().open, 1, 'the other session\'s stream is still open');

  await app.inject({ method: 'PUT', url: `/api/user/update/${owner.id}`, headers: bearer(app, admin), payload: { is_active: false } });
  t.equal((await readUntil(byOther, () => false)).ended, true, 'disabling the user ended its last stream');
  t.equal(app.eventStreams.stats().open, 0);
});

t.test('a client that does not read is cut off once its unsent data passes the bound; memory stays bounded', async (t) => {
  const { app } = await serve(t, tempDir(t), await freePort(), { events: { streamMaxBufferedBytes: 64 * 1024 } });
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const { port } = app.server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`GET /api/user/${owner.id}/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(app, owner).authorization}\r\n\r\n`);
  socket.pause();
  t.teardown(() => socket.destroy());
  await until(() => app.eventStreams.stats().open === 1);
  const big = 'x'.repeat(4000);
  // Events keep coming (each write a few dozen), until the server gives up on the client; it never reads.
  for (let round = 0; round < 2000 && app.eventStreams.stats().cutOff === 0; round += 1) {
    await app.writer.write(() => {
      for (let i = 0; i < 20; i += 1) {
        app.messagesRepo.insertInbound({ userId: owner.id, contactWaId: '15551230003', contactName: null, wamid: `wamid.big${round}.${i}`,
          type: 'text', text: big, payloadJson: '{}', createdAt: 1_790_000_000_000 });
      }
    });
    await turn();
  }
  t.same(app.eventStreams.stats(), { open: 0, cutOff: 1 });
});

t.test('a long poll over a real connection waits for the next commit, and a client that leaves stops its wait', async (t) => {
  const { app, base } = await serve(t, tempDir(t), await freePort());
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const auth = bearer(app, owner);
  const waiting = fetch(`${base}/api/user/${owner.id}/events?wait=30`, { headers: auth });
  await until(() => app.eventNotifier.size() === 1);
  await inbound(app, 'wake');
  const page = await (await waiting).json() as { events: { id: number }[]; next_after: number };
  t.same([page.events.map((e) => e.id), page.next_after], [[1], 1]);

  const abort = new AbortController();
  const left = fetch(`${base}/api/user/${owner.id}/events?after=1&wait=30`, { headers: auth, signal: abort.signal }).catch(() => 'aborted');
  await until(() => app.eventNotifier.size() === 1);
  abort.abort();
  t.equal(await left, 'aborted');
  await until(() => app.eventNotifier.size() === 0);
  t.pass('the wait ended with the connection');
});
