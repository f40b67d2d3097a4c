// Retention sweep: aged raw callbacks, messages (with statuses and emptied conversations), unmatched statuses,
// idempotency keys and revoked sessions go in batches; fresh data and `0` (keep forever) stay; freed pages are reused.
import t from 'tap';
import type { App } from '../src/app';
import { createRetentionRepo } from '../src/db/retention-repo';
import { BATCH, createRetentionSweep } from '../src/jobs/retention';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { acceptedOutbound, deliver, envelope, networkSeconds as seconds, statusItem, textItem } from './fixtures/webhooks';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 1, 12);
const SECRET = 'retention-secret';
const PHONE = '900000000000001';
const OTHER_PHONE = '900000000000002';

/** The app on a clock the test moves; its config as given. */
async function start(t: tap.Test, overrides: Record<string, unknown> = {}) {
  const clock = { now: NOW };
  const built = await buildTestApp(t, { messagingAppSecret: SECRET, ...overrides }, { now: () => new Date(clock.now) });
  return { ...built, clock };
}

const rows = (app: App, sql: string) => app.db.$client.prepare(sql).all();
const count = (app: App, table: string) => app.db.$client.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
const inboundText = (wamid: string, from: string, at: number) => envelope(PHONE, { messages: [textItem(wamid, from, seconds(at), wamid)] });

t.test('processed raw callbacks older than RETENTION_WEBHOOK_EVENTS_DAYS go; fresh, failed and dead ones and the facts stay', async (t) => {
  const { app, clock } = await start(t, { retentionWebhookEventsDays: 30 });
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  t.equal((await deliver(app, inboundText('wamid.old', '15551230001', NOW), SECRET)).statusCode, 200);
  t.equal((await deliver(app, inboundText('wamid.dead', '15551230001', NOW), SECRET)).statusCode, 200);
  app.db.$client.exec("UPDATE webhook_events SET state = 'dead' WHERE raw_body LIKE '%wamid.dead%'");
  clock.now = NOW + 30 * DAY - 1000;
  t.equal((await deliver(app, inboundText('wamid.fresh', '15551230001', clock.now), SECRET)).statusCode, 200);
  clock.now = NOW + 30 * DAY + 1000;

  const totals = await app.retentionSweep.run();
  t.match(totals, { webhookEvents: 1, messages: 0 });
  const left = rows(app, 'SELECT state, raw_body LIKE \'%wamid.fresh%\' AS fresh FROM webhook_events ORDER BY id');
  t.same(left, [{ state: 'dead', fresh: 0 }, { state: 'processed', fresh: 1 }], 'the old processed one went; dead and fresh stay');
  t.equal(count(app, 'messages'), 3, 'the messages the callbacks carried stay');
});

t.test('RETENTION_WEBHOOK_EVENTS_DAYS=0 keeps raw callbacks forever', async (t) => {
  const { app, clock } = await start(t, { retentionWebhookEventsDays: 0 });
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  await deliver(app, inboundText('wamid.old', '15551230001', NOW), SECRET);
  clock.now = NOW + 3650 * DAY;
  t.match(await app.retentionSweep.run(), { webhookEvents: 0 });
  t.equal(count(app, 'webhook_events'), 1);
});

t.test('messages older than RETENTION_MESSAGES_DAYS go with their statuses; emptied conversations go, the others stay consistent', async (t) => {
  const { app, clock } = await start(t, { retentionMessagesDays: 30 });
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const old = NOW - 31 * DAY;
  const fresh = NOW - 29 * DAY;
  // Only old messages: the conversation goes.
  await deliver(app, inboundText('wamid.a1', '15550000001', old), SECRET);
  const a2 = acceptedOutbound(app, owner.id, 'wamid.a2', '15550000001', old + 1000);
  await deliver(app, envelope(PHONE, { statuses: [statusItem('wamid.a2', 'delivered', seconds(old + 2000))] }), SECRET);
  // Old inbound, fresh outbound: stays, with no inbound left.
  await deliver(app, inboundText('wamid.b1', '15550000002', old), SECRET);
  acceptedOutbound(app, owner.id, 'wamid.b2', '15550000002', fresh);
  // Old outbound, fresh inbound: stays as it was.
  acceptedOutbound(app, owner.id, 'wamid.c1', '15550000003', old);
  await deliver(app, inboundText('wamid.c2', '15550000003', fresh), SECRET);
  t.equal(app.messagesRepo.history(a2.id).length, 1);
  // The network's time counts for inbound messages, not when the callback arrived (now).
  clock.now = NOW;

  const totals = await app.retentionSweep.run();
  t.match(totals, { messages: 4, conversations: 1 });
  t.same(rows(app, 'SELECT wamid FROM messages ORDER BY wamid'), [{ wamid: 'wamid.b2' }, { wamid: 'wamid.c2' }]);
  t.same(rows(app, `SELECT contact_wa_id AS contact, last_message_at AS lastMessageAt, last_inbound_at AS lastInboundAt
    FROM conversations ORDER BY contact_wa_id`), [
    { contact: '15550000002', lastMessageAt: fresh, lastInboundAt: null },
    { contact: '15550000003', lastMessageAt: seconds(fresh) * 1000, lastInboundAt: seconds(fresh) * 1000 },
  ]);
  t.same(app.messagesRepo.history(a2.id), [], 'statuses went with their message');
  t.same(rows(app, 'PRAGMA foreign_key_check'), []);

  // The API lists what is left.
  const admin = await createAdmin(app);
  const listed = await app.inject({ method: 'GET', url: `/api/user/${owner.id}/conversations`, headers: bearer(app, admin) });
  t.equal(listed.statusCode, 200);
  t.equal(JSON.stringify(listed.json()).includes('wamid.a1'), false);
  t.equal(JSON.stringify(listed.json()).includes('15550000001'), false, 'the emptied conversation is not listed');
});

t.test('RETENTION_MESSAGES_DAYS=0 (the default) keeps messages forever', async (t) => {
  const { app, config, clock } = await start(t);
  t.equal(config.retentionMessagesDays, 0);
  await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  await deliver(app, inboundText('wamid.ancient', '15550000001', NOW - 3000 * DAY), SECRET);
  clock.now = NOW + 10 * DAY;
  t.match(await app.retentionSweep.run(), { messages: 0, conversations: 0 });
  t.equal(count(app, 'messages'), 1);
  t.equal(count(app, 'conversations'), 1);
});

t.test('many rows go in batches of a few hundred, all of them', async (t) => {
  const { app, clock } = await start(t, { retentionMessagesDays: 1, retentionWebhookEventsDays: 1 });
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const old = NOW - 2 * DAY;
  app.writer.writeNow(() => {
    // One big conversation (several batches alone) and many small ones.
    for (let i = 0; i < 1300; i++) {
      app.messagesRepo.insertInbound({ userId: owner.id, contactWaId: i < 1100 ? '15550000001' : `1555100${i}`, contactName: null,
        wamid: `wamid.${i}`, type: 'text', text: 'x', payloadJson: '{}', createdAt: old + i });
    }
    for (let i = 0; i < 1200; i++) {
      app.webhookEventsRepo.insertProcessed({ receivedAt: old, rawBody: '{}', failed: false, error: null, at: old, userId: undefined });
    }
    app.messagesRepo.insertInbound({ userId: owner.id, contactWaId: '15550000001', contactName: null,
      wamid: 'wamid.keep', type: 'text', text: 'x', payloadJson: '{}', createdAt: NOW });
  });
  clock.now = NOW;
  // The app's own sweep, built as its plugin builds it, except that each write it makes counts the rows of the two
  // tables before and after its body (inside the same transaction): the size of every delete batch, as stored.
  const batches: { messages: number; webhookEvents: number }[] = [];
  const rowsNow = () => ({ messages: count(app, 'messages'), webhookEvents: count(app, 'webhook_events') });
  const sweep = createRetentionSweep({
    writer: {
      write: (body) => app.writer.write(() => {
        const before = rowsNow();
        const result = body();
        const after = rowsNow();
        batches.push({ messages: before.messages - after.messages, webhookEvents: before.webhookEvents - after.webhookEvents });
        return result;
      }),
    },
    retention: createRetentionRepo(app.db), events: app.webhookEventsRepo, sessions: app.sessionsRepo, now: app.now, log: app.log,
    webhookEventsDays: app.config.retentionWebhookEventsDays, messagesDays: app.config.retentionMessagesDays,
    media: { remove: app.mediaFiles.remove, sweepOrphans: app.mediaDownloads.sweepOrphans },
  });

  const totals = await sweep.run();
  t.match(totals, { messages: 1300, conversations: 200, webhookEvents: 1200 });
  t.same(rows(app, 'SELECT wamid FROM messages'), [{ wamid: 'wamid.keep' }]);
  t.equal(count(app, 'conversations'), 1);
  t.equal(count(app, 'webhook_events'), 0);
  t.equal(BATCH, 500, 'the batch the README states');
  const sizes = (key: 'messages' | 'webhookEvents') => batches.map((batch) => batch[key]).filter((n) => n > 0);
  t.same(sizes('webhookEvents'), [500, 500, 200], 'raw callbacks: three batches, none over 500 rows');
  t.same(sizes('messages'), [500, 500, 300], 'messages (the big conversation read again after each flush): none over 500 rows');
  t.equal(batches.filter((batch) => batch.messages > 0 && batch.webhookEvents > 0).length, 0, 'one table per batch');
});

t.test('each raw callback is linked to the user it was routed to; deleting the user deletes its raw callbacks', async (t) => {
  const { app } = await start(t);
  const admin = await createAdmin(app);
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: PHONE });
  const bob = await createUser(app, { email: 'bob@example.com', messagingPhoneNumberId: OTHER_PHONE });
  await deliver(app, inboundText('wamid.ana', '15550000001', NOW), SECRET);
  await deliver(app, envelope(OTHER_PHONE, { messages: [textItem('wamid.bob', '15550000001', seconds(NOW), 'hi')] }), SECRET);
  await deliver(app, envelope('999999999999999', { messages: [textItem('wamid.nobody', '15550000001', seconds(NOW), 'hi')] }), SECRET);
  // A status whose processing fails is linked too (it was routed before it failed).
  app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.orphan_statuses BEGIN SELECT RAISE(ABORT, 'injected'); END`);
  await deliver(app, envelope(PHONE, { statuses: [statusItem('wamid.unknown', 'sent', seconds(NOW))] }), SECRET);
  t.same(rows(app, 'SELECT user_id AS userId, state FROM webhook_events ORDER BY id'), [
    { userId: ana.id, state: 'processed' }, { userId: bob.id, state: 'processed' }, { userId: null, state: 'processed' },
    { userId: ana.id, state: 'failed' },
  ]);

  const res = await app.inject({ method: 'DELETE', url: `/api/user/delete/${ana.id}`, headers: bearer(app, admin) });
  t.equal(res.statusCode, 204);
  t.same(rows(app, 'SELECT user_id AS userId FROM webhook_events ORDER BY id'), [{ userId: bob.id }, { userId: null }]);
});

t.test('unmatched statuses older than a week, idempotency keys older than a day and expired revocations go', async (t) => {
  const { app, clock } = await start(t);
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  app.messagesRepo.applyStatus(user.id, 'wamid.old', { status: 'sent', at: 1, errorJson: null }, NOW - 7 * DAY - 60_000);
  app.messagesRepo.applyStatus(user.id, 'wamid.recent', { status: 'sent', at: 2, errorJson: null }, NOW - 7 * DAY + 60_000);
  const times = { expiredBefore: 0, abandonedBefore: 0 };
  app.idempotencyRepo.claim(user.id, 'old-key', 'h', NOW - DAY - 1000, times);
  app.idempotencyRepo.claim(user.id, 'new-key', 'h', NOW - DAY + 1000, times);
  app.sessionsRepo.revoke('expired-jti', NOW - 1, 0);
  app.sessionsRepo.revoke('live-jti', NOW + 1000, 0);
  clock.now = NOW;

  t.match(await app.retentionSweep.run(), { orphanStatuses: 1, idempotencyKeys: 1, revokedSessions: 1 });
  t.same(rows(app, 'SELECT wamid FROM orphan_statuses'), [{ wamid: 'wamid.recent' }]);
  t.same(rows(app, 'SELECT key FROM idempotency_keys'), [{ key: 'new-key' }]);
  t.same(rows(app, 'SELECT jti FROM revoked_sessions'), [{ jti: 'live-jti' }]);
});

t.test('the sweep runs once the server listens, and logs what it deleted', async (t) => {
  const { app, logs } = await start(t);
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  app.messagesRepo.applyStatus(user.id, 'wamid.old', { status: 'sent', at: 1, errorJson: null }, NOW - 8 * DAY);
  await app.ready();
  t.equal(count(app, 'orphan_statuses'), 1, 'ready alone (tests, scripts) sweeps nothing');
  await app.listen({ host: '127.0.0.1', port: 0 });
  await app.retentionSweep.idle();
  t.equal(count(app, 'orphan_statuses'), 0);
  t.match(logs(), /"deleted":\{[^}]*"orphanStatuses":1[^}]*\},"msg":"retention sweep deleted aged data"/);
});

t.test('freed pages are reused: the file stops growing at steady state', async (t) => {
  // The messages' events are kept as long as the messages here: both tables reach their steady state.
  const { app, clock } = await start(t, { retentionMessagesDays: 1, retentionEventsDays: 1 });
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  const sqlite = app.db.$client;
  t.equal(sqlite.pragma('auto_vacuum', { simple: true }), 0, 'auto_vacuum NONE: freed pages stay in the file, on the free list');
  const fill = (round: number, at: number) => app.writer.writeNow(() => {
    for (let i = 0; i < 2000; i++) {
      app.messagesRepo.insertInbound({ userId: owner.id, contactWaId: `1555${i % 50}`, contactName: null, wamid: `wamid.${round}.${i}`,
        type: 'text', text: 'x'.repeat(500), payloadJson: '{}', createdAt: at });
    }
  });
  const pages = () => sqlite.pragma('page_count', { simple: true }) as number;
  const freePages = () => sqlite.pragma('freelist_count', { simple: true }) as number;

  // Every other day 2,000 messages arrive and the previous ones (two days old) go: five rounds.
  fill(1, NOW - 2 * DAY);
  const grown = pages();
  for (let round = 2; round <= 6; round++) {
    clock.now = NOW + (round - 2) * 2 * DAY;
    await app.retentionSweep.run();
    if (round === 2) t.ok(freePages() > grown / 2, 'the deleted rows\' pages are free');
    fill(round, clock.now);
    t.equal(count(app, 'messages'), 2000);
  }
  // Without reuse the file would hold five times the pages; a few index pages may split differently.
  t.ok(pages() <= grown * 1.05, `the same rows fit in the freed pages (${pages()} pages, ${grown} after the first day)`);
});
