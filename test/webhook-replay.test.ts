// Processing that throws: the callback is still acknowledged, kept with its error, and applied at the next start-up.
// Failures are real SQLite errors from TEMP triggers: they live on the connection, so a restart removes them.
import { PassThrough } from 'node:stream';
import t from 'tap';
import { buildApp } from '../src/app';
import { createUser, tempDir, testConfig } from './helper';
import { deliver, envelope, inboxRows, messageByWamid, messageCount, statusItem, textItem } from './fixtures/webhooks';

const PHONE = '900000000000001';
const SECRET = 'replay-secret';

async function start(t: tap.Test, dir: string) {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const app = await buildApp(testConfig(dir, { logLevel: 'info', messagingAppSecret: SECRET }), { logStream: stream });
  t.teardown(() => app.close());
  await app.ready();
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
    { rawBody: twoMessages, state: 'failed', error: 'entry[0].changes[0].messages[1]: injected failure' },
    { rawBody: otherCallback, state: 'processed', error: null },
  ]);
  t.ok(messageByWamid(first.app, 'wamid.fine'), 'the other item of the failed event is stored');
  t.equal(messageByWamid(first.app, 'wamid.boom'), undefined);
  t.equal(messageCount(first.app), 2);
  await first.app.close();

  const second = await start(t, dir);
  t.match(inboxRows(second.app), [{ state: 'processed', error: null }, { state: 'processed', error: null }]);
  t.equal(messageByWamid(second.app, 'wamid.boom')?.text, 'boom');
  t.equal(messageCount(second.app), 3, 'the items stored the first time are not duplicated');
  t.match(second.logged('webhook events processed again at start-up'), [{ events: 1, failed: 0 }]);
});

t.test('an outcome that cannot be recorded: 200, the event stays pending with no effect, processed at the next start-up', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  const user = await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const sentId = first.app.messagesRepo.insertOutbound({ userId: user.id, to: '15551234567', type: 'text', text: 'Hi', payloadJson: '{}', createdAt: 1 });
  first.app.messagesRepo.markAccepted(sentId, 'wamid.out', '15551234567', 1);
  first.app.db.$client.exec(`CREATE TEMP TRIGGER stuck BEFORE UPDATE ON main.webhook_events
    BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);

  const status = envelope(PHONE, { statuses: [statusItem('wamid.out', 'read', 1767225600)] });
  const res = await deliver(first.app, status, SECRET);
  t.equal(res.statusCode, 200, 'stored durably, so acknowledged');
  t.match(inboxRows(first.app), [{ rawBody: status, state: 'pending', error: null, processedAt: null }]);
  t.equal(first.app.messagesRepo.findById(sentId)!.status, 'accepted', "the event's savepoint rolled back");
  t.match(first.logged('webhook event outcome not recorded; it stays pending'), [{ err: { message: 'disk trouble' } }]);
  await first.app.close();

  const second = await start(t, dir);
  t.match(inboxRows(second.app), [{ state: 'processed', error: null, processedAt: Number }]);
  t.equal(second.app.messagesRepo.findById(sentId)!.status, 'read');
  t.equal(second.app.messagesRepo.history(sentId).length, 1);
});

t.test('a batch that cannot be stored is not acknowledged (5xx: the network delivers it again)', async (t) => {
  const { app } = await start(t, tempDir(t));
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  app.db.$client.exec(`CREATE TEMP TRIGGER full BEFORE INSERT ON main.webhook_events BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  const responses = await Promise.all([deliver(app, twoMessages, SECRET), deliver(app, otherCallback, SECRET)]);
  for (const res of responses) {
    t.equal(res.statusCode, 500);
    t.same(res.json(), { statusCode: 500, code: 'INTERNAL_ERROR', error: 'Internal Server Error', message: 'Something went wrong; the error is logged with this request id' });
  }
  app.db.$client.exec('DROP TRIGGER temp.full');
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), 0);
});

t.test('a start-up with nothing to replay logs nothing about it', async (t) => {
  const { logged } = await start(t, tempDir(t));
  t.same(logged('webhook events processed again at start-up'), []);
});

t.test('statuses still unmatched after a week are forgotten at start-up; recent ones are kept', async (t) => {
  const dir = tempDir(t);
  const first = await start(t, dir);
  const user = await createUser(first.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const weekMs = 7 * 86_400_000;
  const now = Date.now();
  first.app.messagesRepo.applyStatus(user.id, 'wamid.old', { status: 'sent', at: 1, errorJson: null }, now - weekMs - 60_000);
  first.app.messagesRepo.applyStatus(user.id, 'wamid.recent', { status: 'sent', at: 2, errorJson: null }, now - weekMs + 60_000);
  t.equal(first.app.messagesRepo.orphanCount(), 2);
  await first.app.close();

  const second = await start(t, dir);
  t.same(second.app.db.$client.prepare('SELECT wamid FROM orphan_statuses').all(), [{ wamid: 'wamid.recent' }]);
  t.match(second.logged('unmatched statuses older than a week forgotten'), [{ pruned: 1 }]);
});
