// Processing that throws: the callback is still acknowledged, kept with its error, and processed again after start-up
// and every few minutes, at most 5 times in all, then left dead.
// Failures are real SQLite errors from TEMP triggers: they live on the connection, so a restart removes them.
import { PassThrough } from 'node:stream';
import t from 'tap';
import { buildApp, type App } from '../src/app';
import { createUser, tempDir, testConfig } from './helper';
import { deliver, envelope, inboxRows, messageByWamid, messageCount, statusItem, textItem } from './fixtures/webhooks';

const PHONE = '900000000000001';
const SECRET = 'replay-secret';

/** The app on `dir`; `beforeReady` runs first (a TEMP trigger must exist before the start-up replay). The replay is awaited. */
async function start(t: tap.Test, dir: string, beforeReady?: (app: App) => void) {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const app = await buildApp(testConfig(dir, { logLevel: 'info', messagingAppSecret: SECRET }), { logStream: stream });
  t.teardown(() => app.close());
  beforeReady?.(app);
  await app.ready();
  await app.webhookReplay.idle();
  return { app, logged: (msg: string) => lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === msg) };
}

const twoMessages = envelope(PHONE, {
  contacts: [{ wa_id: '15551234567', profile: { name: 'Ana' } }],
  messages: [textItem('wamid.fine', '15551234567', 1767225600, 'fine'), textItem('wamid.boom', '15551234567', 1767225601, 'boom')],
});
const otherCallback = envelope(PHONE, { messages: [textItem('wamid.other', '15551234568', 1767225602, 'other')] });

t.test('an item that throws: 200, the event failed with its error, applied after a restart', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  first.app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.boom'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);

  const responses = await Promise.all([deliver(first.app, twoMessages, SECRET), deliver(first.app, otherCallback, SECRET)]);
  t.same(responses.map((r) => [r.statusCode, r.json()]), [[200, { status: 'received' }], [200, { status: 'received' }]]);
  t.match(inboxRows(first.app), [
    { rawBody: twoMessages, state: 'failed', error: 'entry[0].changes[0].messages[1]: injected failure', attempts: 1 },
    { rawBody: otherCallback, state: 'processed', error: null, attempts: 1 },
  ]);
  t.ok(messageByWamid(first.app, 'wamid.fine'), 'the other item of the failed event is stored');
  t.equal(messageByWamid(first.app, 'wamid.boom'), undefined);
  t.equal(messageCount(first.app), 2);
  await first.app.close();

  const second = await start(t, dir);
  t.match(inboxRows(second.app), [{ state: 'processed', error: null, attempts: 2 }, { state: 'processed', error: null, attempts: 1 }]);
  t.equal(messageByWamid(second.app, 'wamid.boom')?.text, 'boom');
  t.equal(messageCount(second.app), 3, 'the items stored the first time are not duplicated');
  t.match(second.logged('webhook events processed again'), [{ events: 1, failed: 0, dead: 0 }]);
});

t.test('a callback whose row cannot be stored: 503, nothing it changed is kept, the redelivery is applied', async (t) => {
  const { app, logged } = await start(t, tempDir(t));
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const sentId = app.messagesRepo.insertOutbound({ userId: user.id, to: '15551234567', type: 'text', text: 'Hi', payloadJson: '{}', createdAt: 1 });
  app.messagesRepo.markAccepted(sentId, 'wamid.out', '15551234567', 1);
  // The status is applied first, then the row that records the callback and its outcome is refused.
  app.db.$client.exec(`CREATE TEMP TRIGGER stuck BEFORE INSERT ON main.webhook_events BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);

  const status = envelope(PHONE, { statuses: [statusItem('wamid.out', 'read', 1767225600)] });
  const res = await deliver(app, status, SECRET);
  t.equal(res.statusCode, 503, 'not stored, so not acknowledged: the network delivers it again');
  t.equal(res.headers['retry-after'], '10');
  t.equal(res.json().code, 'STORAGE_UNAVAILABLE');
  t.same(inboxRows(app), []);
  t.equal(app.messagesRepo.findById(sentId)!.status, 'accepted', "the status went with the callback's savepoint");
  t.same(app.messagesRepo.history(sentId), []);
  t.match(logged('webhook callback not stored; the network retries it'), [{ err: { message: 'disk trouble' } }]);

  app.db.$client.exec('DROP TRIGGER temp.stuck');
  t.equal((await deliver(app, status, SECRET)).statusCode, 200);
  t.match(inboxRows(app), [{ state: 'processed', error: null, attempts: 1, processedAt: Number }]);
  t.equal(app.messagesRepo.findById(sentId)!.status, 'read');
  t.equal(app.messagesRepo.history(sentId).length, 1);
});

t.test('a batch that cannot be stored is not acknowledged (503 with Retry-After: the network delivers it again)', async (t) => {
  const { app } = await start(t, tempDir(t));
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  // The database file takes no writes (SQLite's own read-only refusal, on the app's connection).
  app.db.$client.pragma('query_only = ON');
  const responses = await Promise.all([deliver(app, twoMessages, SECRET), deliver(app, otherCallback, SECRET)]);
  for (const res of responses) {
    t.equal(res.statusCode, 503);
    t.equal(res.headers['retry-after'], '10');
    t.same(res.json(), { statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
      message: 'The gateway cannot store data right now; nothing was changed, retry later' });
  }
  app.db.$client.pragma('query_only = OFF');
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), 0);
  const again = await deliver(app, twoMessages, SECRET);
  t.equal(again.statusCode, 200, 'the redelivery is taken once storage is back');
  t.equal(messageCount(app), 2);
});

t.test('a full disk while a callback is processed in its request: 503, nothing stored, nothing half-applied', async (t) => {
  const { app } = await start(t, tempDir(t));
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const client = app.db.$client;
  const pages = client.pragma('page_count', { simple: true }) as number;
  client.pragma(`max_page_count = ${pages}`);
  // A message text larger than a page: storing the raw callback needs fresh pages the file may not grow to.
  const big = envelope(PHONE, { messages: [textItem('wamid.big', '15551234567', 1767225600, 'b'.repeat(100_000))] });
  const res = await deliver(app, big, SECRET);
  t.equal(res.statusCode, 503);
  t.same(res.json(), { statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
    message: 'The gateway cannot store data right now; nothing was changed, retry later' });
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), 0);
  client.pragma(`max_page_count = ${pages + 10_000}`);
  t.equal((await deliver(app, big, SECRET)).statusCode, 200);
  t.equal(messageByWamid(app, 'wamid.big')?.text?.length, 100_000);
});

t.test('the disk fills up while a stored callback is processed: 503, not a bare 500, and nothing kept half-done', async (t) => {
  const { app } = await start(t, tempDir(t));
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const client = app.db.$client;
  client.pragma(`max_page_count = ${client.pragma('page_count', { simple: true }) as number}`);
  // The messages fill what the file holds; the small raw callback itself still fits beside them.
  const conversation = app.messagesRepo.conversationId(user.id, '15550000000', 0, null);
  const filler = client.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, status, payload_json, created_at)
    VALUES (?, ?, 'outbound', 'text', 'accepted', '{}', 0)`);
  t.throws(() => { for (;;) filler.run(user.id, conversation); }, { code: 'SQLITE_FULL' });
  const before = messageCount(app);
  const res = await deliver(app, otherCallback, SECRET);
  t.equal(res.statusCode, 503);
  t.same(res.json(), { statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
    message: 'The gateway cannot store data right now; nothing was changed, retry later' });
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), before);
  client.pragma('max_page_count = 1000000');
  t.equal((await deliver(app, otherCallback, SECRET)).statusCode, 200);
  t.match(inboxRows(app), [{ state: 'processed' }]);
});

t.test('a start-up with nothing to replay logs nothing about it', async (t) => {
  const { logged } = await start(t, tempDir(t));
  t.same(logged('webhook events processed again'), []);
});

const boom = (app: App) => app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.boom'
  BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
const poison = envelope(PHONE, { messages: [textItem('wamid.boom', '15551234567', 1767225601, 'boom')] });

t.test('a poison event: 5 attempts in all (the first in its request), then dead, kept and never processed again automatically', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir, boom);
  await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  t.equal((await deliver(first.app, poison, SECRET)).statusCode, 200);
  t.match(inboxRows(first.app), [{ state: 'failed', attempts: 1 }]);
  await first.app.close();

  const seen: [string, number][] = [];
  for (let restart = 1; restart <= 6; restart++) {
    // The last restart comes with the fix (no trigger): a dead event still waits for an administrator.
    const next = await start(t, dir, restart < 6 ? boom : undefined);
    const [event] = inboxRows(next.app);
    seen.push([event!.state, event!.attempts]);
    t.equal(event!.error, 'entry[0].changes[0].messages[0]: injected failure');
    if (restart === 4) t.match(next.logged('webhook event dead: processing failed too often; replay it after a fix'), [{ webhookEventId: event!.id, attempts: 5 }]);
    if (restart > 4) t.same(next.logged('webhook events processed again'), [], `restart ${restart}: nothing replayed`);
    t.equal(messageByWamid(next.app, 'wamid.boom'), undefined);
    await next.app.close();
  }
  t.same(seen, [['failed', 2], ['failed', 3], ['failed', 4], ['dead', 5], ['dead', 5], ['dead', 5]]);
});

t.test('the periodic run counts attempts the same way; an outcome that cannot be recorded is counted too', async (t) => {
  const { app } = await start(t, tempDir(t), boom);
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  t.equal((await deliver(app, poison, SECRET)).statusCode, 200);
  // A second event that failed once, and whose processing then works but whose outcome cannot be written: without
  // counting it would loop forever.
  app.db.$client.exec(`CREATE TEMP TRIGGER other BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.other'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  t.equal((await deliver(app, otherCallback, SECRET)).statusCode, 200);
  app.db.$client.exec(`DROP TRIGGER temp.other; CREATE TEMP TRIGGER unrecordable BEFORE UPDATE ON main.webhook_events
    WHEN NEW.state = 'processed' BEGIN SELECT RAISE(ABORT, 'cannot record'); END`);
  t.match(inboxRows(app), [{ state: 'failed', attempts: 1 }, { state: 'failed', attempts: 1 }]);

  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await app.webhookReplay.run());
  t.same(runs, [
    { events: 2, failed: 2, dead: 0 }, { events: 2, failed: 2, dead: 0 }, { events: 2, failed: 2, dead: 0 },
    { events: 2, failed: 0, dead: 2 }, { events: 0, failed: 0, dead: 0 },
  ]);
  t.match(inboxRows(app), [{ state: 'dead', attempts: 5 }, { state: 'dead', attempts: 5, error: 'event: outcome not recorded: cannot record' }]);
  t.equal(messageByWamid(app, 'wamid.other'), undefined, 'each run rolled back');
});

/**
 * `count` failed events (one inbound message each), written straight into the inbox as a crash would leave them;
 * `padding` spaces after each JSON body make a raw callback that large (still valid JSON).
 */
function seedFailed(app: App, count: number, padding = 0): void {
  const insert = app.db.$client.prepare(`INSERT INTO webhook_events (received_at, raw_body, state, error, attempts, processed_at)
    VALUES (?, ?, 'failed', 'earlier failure', 1, ?)`);
  app.db.$client.transaction(() => {
    for (let i = 0; i < count; i++) {
      const body = envelope(PHONE, { messages: [textItem(`wamid.seed.${i}`, '15551234567', 1767225600 + i, `m${i}`)] });
      insert.run(1, body + ' '.repeat(padding), 1);
    }
  })();
}

const processedCount = (app: App) => app.db.$client.prepare("SELECT count(*) FROM webhook_events WHERE state = 'processed'").pluck().get() as number;

t.test('the start-up replay runs in batches after ready, yielding to the event loop between them', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  seedFailed(first.app, 500);
  await first.app.close();

  const app = await buildApp(testConfig(dir, { messagingAppSecret: SECRET }));
  t.teardown(() => app.close());
  await app.ready();
  t.equal(processedCount(app), 0, 'ready does not wait for the replay');
  await new Promise((resolve) => setImmediate(resolve));
  const early = processedCount(app);
  t.ok(early < 500, `${early} of 500 processed one turn later`);
  t.same(await app.inject({ method: 'GET', url: '/healthz' }).then((r) => r.statusCode), 200, 'requests are served meanwhile');
  await app.webhookReplay.idle();
  t.equal(processedCount(app), 500);
  t.equal(messageCount(app), 500);
  t.match(inboxRows(app).slice(0, 1), [{ state: 'processed', attempts: 2, error: null }]);
});

t.test('a replay batch holds at most 50 events, or stops once it has read 1 MB of raw callbacks', async (t) => {
  const { app } = await start(t, tempDir(t));
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  /** Walks the replay as the job does, batch by batch: each batch's outcome and the events it processed (stored state). */
  async function walk() {
    const batches: { events: number; processed: number }[] = [];
    let afterId = 0;
    for (let before = processedCount(app); ; before = processedCount(app)) {
      const batch = await app.webhookInbox.replayBatch(afterId);
      if (!batch) return batches;
      afterId = batch.lastId;
      batches.push({ events: batch.events, processed: processedCount(app) - before });
    }
  }

  seedFailed(app, 120);
  t.same(await walk(), [{ events: 50, processed: 50 }, { events: 50, processed: 50 }, { events: 20, processed: 20 }]);
  t.equal(messageCount(app), 120);

  // 400 KB callbacks: the third one takes a batch past 1 MB, so the batch ends after it.
  app.db.$client.exec('DELETE FROM webhook_events');
  seedFailed(app, 7, 400 * 1024);
  t.same(await walk(), [{ events: 3, processed: 3 }, { events: 3, processed: 3 }, { events: 1, processed: 1 }]);
});

t.test('closing the app during a replay stops it between batches; the rest is processed at the next start-up', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  seedFailed(first.app, 300);
  await first.app.close();

  const stream = new PassThrough();
  let logs = '';
  stream.on('data', (chunk: Buffer) => { logs += chunk.toString(); });
  const app = await buildApp(testConfig(dir, { logLevel: 'info', messagingAppSecret: SECRET }), { logStream: stream });
  await app.ready();
  await new Promise((resolve) => setImmediate(resolve));
  await app.close();
  await app.webhookReplay.idle();
  t.notOk(logs.includes('"level":50'), 'no error: no batch ran on the closed database');
  t.notMatch(logs, /not open|interrupted/);

  const next = await start(t, dir);
  t.equal(processedCount(next.app), 300);
  t.equal(messageCount(next.app), 300);
});
