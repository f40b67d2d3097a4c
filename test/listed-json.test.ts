// messages.listed_json: every write that changes a message renders it again, rows stored without it are listed
// the same and filled at the next start, and listings are exactly the stored JSON joined.
import t from 'tap';
import type { App } from '../src/app';
import { buildApp } from '../src/app';
import { STORED_MESSAGE, type StoredMessage } from '../src/db/listed-messages';
import { listedMessageJson } from '../src/views/message-json';
import { bearer, buildTestApp, createUser } from './helper';
import { inbound, outbound, seedDemoInbox } from './fixtures/conversations';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const MIN = 60_000;

/** Messages whose stored JSON differs from rendering their row and history now (ids), and how many are stored. */
function stale(app: App): { stale: number[]; stored: number } {
  const rows = app.db.$client.prepare(`SELECT m.id, m.listed_json AS listed, ${STORED_MESSAGE} AS stored FROM messages m ORDER BY m.id`)
    .all() as { id: number; listed: string | null; stored: string }[];
  return {
    stale: rows.filter((r) => r.listed !== listedMessageJson(JSON.parse(r.stored) as StoredMessage)).map((r) => r.id),
    stored: rows.length,
  };
}

t.test('every write that changes a message leaves its stored JSON equal to rendering it afresh', async (t) => {
  const { app } = await buildTestApp(t, {}, { now: () => new Date(NOW) });
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '1001', messagingToken: 'tok' });
  const repo = app.messagesRepo;
  const check = (step: string, count: number) => t.same(stale(app), { stale: [], stored: count }, step);

  const hello = inbound(app, ana.id, { from: '111', name: 'Ana', at: NOW - 60 * MIN, text: 'hello "quoted" </script> 😀' });
  check('inbound', 1);
  t.equal(repo.insertInbound({ userId: ana.id, contactWaId: '111', contactName: null, wamid: hello, type: 'text', text: 'changed',
    payloadJson: '{}', createdAt: NOW }), false);
  check('redelivered inbound changes nothing', 1);
  // Inbound rows are stored with their JSON in the INSERT: the kinds whose JSON reads more than the text.
  const tap = { interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } } };
  repo.insertInbound({ userId: ana.id, contactWaId: '111', contactName: null, wamid: 'wamid.tap', type: 'interactive', text: null,
    payloadJson: JSON.stringify(tap), replyTo: hello, createdAt: NOW - 59 * MIN });
  repo.insertInbound({ userId: ana.id, contactWaId: '111', contactName: null, wamid: 'wamid.where', type: 'location', text: null, payloadJson: '{}',
    locationJson: JSON.stringify({ latitude: 38.7, longitude: -9.1, name: 'Cafe', address: null }), createdAt: NOW - 58 * MIN });
  repo.insertInbound({ userId: ana.id, contactWaId: '111', contactName: null, wamid: 'wamid.odd', type: 'unsupported', text: null, payloadJson: '{}',
    errorJson: JSON.stringify({ code: 131051, title: 'Message type unknown', details: null }), createdAt: NOW - 57 * MIN });
  check('inbound interactive, location and unsupported', 4);
  t.match(JSON.parse(app.db.$client.prepare("SELECT listed_json FROM messages WHERE wamid = 'wamid.tap'").pluck().get() as string),
    { type: 'interactive', reply: { id: 'yes', title: 'Yes' }, reply_to: hello });

  const pending = repo.insertOutbound({ userId: ana.id, to: '111', type: 'text', text: 'hi', payloadJson: '{}', createdAt: NOW - 50 * MIN });
  check('outbound pending', 5);
  repo.markFailed(pending, JSON.stringify({ code: 'MESSAGING_UNAVAILABLE', title: 'No answer', details: null }), NOW - 49 * MIN);
  check('failed before the network', 5);

  // Statuses that raced ahead of the send answer are kept, then applied when the wamid is stored.
  const raced = repo.insertOutbound({ userId: ana.id, to: '111', type: 'template', text: null, payloadJson: '{}', createdAt: NOW - 40 * MIN,
    templateJson: JSON.stringify({ name: 'welcome', language: 'en', params: ['A'] }) });
  t.equal(repo.applyStatus(ana.id, 'wamid.raced', { status: 'delivered', at: NOW - 38 * MIN, errorJson: null }, NOW), 'orphaned');
  repo.markAccepted(raced, 'wamid.raced', '111', NOW - 39 * MIN);
  check('accepted with a raced status', 6);
  repo.applyStatus(ana.id, 'wamid.raced', { status: 'sent', at: NOW - 39 * MIN, errorJson: null }, NOW);
  check('a lower status only joins the history', 6);
  repo.applyStatus(ana.id, 'wamid.raced', { status: 'read', at: NOW - 30 * MIN, errorJson: null,
    pricingJson: JSON.stringify({ billable: true, pricing_model: 'PMP', type: 'regular', category: 'marketing' }) }, NOW);
  check('a higher status moves it, with the first pricing of a template', 6);

  const { wamid } = outbound(app, ana.id, { to: '111', at: NOW - 20 * MIN });
  repo.applyStatus(ana.id, wamid!, { status: 'failed', at: NOW - 19 * MIN, errorJson: JSON.stringify([{ code: 131049, title: 'Not delivered' }]) }, NOW);
  check('failed with the network error', 7);
  repo.applyStatus(ana.id, wamid!, { status: 'delivered', at: NOW - 18 * MIN, errorJson: null }, NOW);
  check('delivered after failed clears the error', 7);
  // Status callbacks patch the stored JSON instead of rendering it again: out of order, repeated, unranked, same
  // instant, pricing first seen on a later status, a failure and then a read.
  const patched = outbound(app, ana.id, { to: '111', at: NOW - 17 * MIN }).wamid!;
  const pricing = (category: string) => JSON.stringify({ billable: true, pricing_model: 'PMP', type: 'regular', category });
  const steps: [string, Parameters<typeof repo.applyStatus>[2]][] = [
    ['read before delivered', { status: 'read', at: NOW - 14 * MIN, errorJson: null }],
    ['delivered earlier in time, with the first pricing', { status: 'delivered', at: NOW - 15 * MIN, errorJson: null, pricingJson: pricing('utility') }],
    ['the same delivered again', { status: 'delivered', at: NOW - 15 * MIN, errorJson: null, pricingJson: pricing('utility') }],
    ['sent at the same instant as delivered', { status: 'sent', at: NOW - 15 * MIN, errorJson: null, pricingJson: pricing('marketing') }],
    ['an unranked status', { status: 'played', at: NOW - 13 * MIN, errorJson: null }],
    ['a late failure', { status: 'failed', at: NOW - 16 * MIN, errorJson: JSON.stringify([{ code: 131026, title: 'Undeliverable' }]) }],
  ];
  for (const [step, event] of steps) {
    repo.applyStatus(ana.id, patched, event, NOW);
    check(step, 8);
  }
  t.same(JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE wamid = ?').pluck().get(patched) as string).statuses
    .map((s: { status: string }) => s.status), ['failed', 'delivered', 'sent', 'read', 'played'], 'history in time order, ties by arrival');

  // The patch finds keys as text: values that spell those keys (a text, an error title, a pricing object with arrays)
  // must not mislead it.
  const spelled = '","status":"read","created_at":"x","error":null,"to":"1","status_updated_at":null,"statuses":[{"at":"2099-01-01"}],"origin":"api"}';
  const tricky = outbound(app, ana.id, { to: '111', at: NOW - 12 * MIN, text: `${spelled} \\" [{ 😀` }).wamid!;
  const oddPricing = JSON.stringify({ billable: true, tiers: [[1, 2], { origin: 'x' }], note: spelled });
  const trickySteps: [string, Parameters<typeof repo.applyStatus>[2]][] = [
    ['a failure whose title spells the keys', { status: 'failed', at: NOW - 11 * MIN, errorJson: JSON.stringify([{ code: 1, title: spelled }]) }],
    ['a pricing object with arrays and the keys in it', { status: 'delivered', at: NOW - 10 * MIN, errorJson: null, pricingJson: oddPricing }],
    ['a status named oddly', { status: 'x"],"origin":"', at: NOW - 9 * MIN, errorJson: null, pricingJson: oddPricing }],
    ['an entry between two others after that', { status: 'sent', at: NOW - 10 * MIN - 1, errorJson: null }],
    ['read', { status: 'read', at: NOW - 8 * MIN, errorJson: null }],
  ];
  for (const [step, event] of trickySteps) {
    repo.applyStatus(ana.id, tricky, event, NOW);
    check(step, 9);
  }
  t.match(JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE wamid = ?').pluck().get(tricky) as string),
    { text: `${spelled} \\" [{ 😀`, status: 'read', pricing: { tiers: [[1, 2], { origin: 'x' }] } });

  const cut = repo.insertOutbound({ userId: ana.id, to: '111', type: 'text', text: 'cut', payloadJson: '{}', createdAt: NOW - 48 * MIN });
  t.equal(repo.markInterrupted(cut, JSON.stringify({ code: 'INTERRUPTED', title: 'Interrupted', details: null }), NOW - 47 * MIN), true);
  check('an interrupted send settled as failed', 10);

  // Inbound media: queued unstored, then the archive's outcomes (stored, failed) render it again.
  const media = (wamid: string) => {
    repo.insertInbound({ userId: ana.id, contactWaId: '111', contactName: null, wamid, type: 'image', text: null, payloadJson: '{}',
      mediaJson: JSON.stringify({ id: `m-${wamid}`, mime_type: 'image/png', sha256: null, filename: null }), createdAt: NOW - 10 * MIN });
    return app.db.$client.prepare('SELECT id FROM messages WHERE wamid = ?').pluck().get(wamid) as number;
  };
  const kept = media('wamid.img.kept');
  const refused = media('wamid.img.refused');
  check('inbound media, not stored yet', 12);
  t.ok(app.mediaRepo.stored(kept, 'image/png', 10, NOW));
  check('media stored', 12);
  t.ok(app.mediaRepo.failed(refused, 'sha256_mismatch', NOW));
  check('media refused', 12);
  t.match(JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE id = ?').pluck().get(kept) as string).media,
    { stored: true, url: `/api/media/${kept}`, error: null });

  // Outbound rows are stored with their JSON in the INSERT too, and the acceptance patches it (wamid, status).
  const photo = repo.insertOutbound({ userId: ana.id, to: '111', type: 'image', text: null, payloadJson: '{}', createdAt: NOW - 9 * MIN, replyTo: hello,
    mediaJson: JSON.stringify({ id: 'upload-1', mime_type: 'image/png', sha256: null, filename: null, caption: 'look "here"' }) });
  const place = repo.insertOutbound({ userId: ana.id, to: '111', type: 'location', text: null, payloadJson: '{}', createdAt: NOW - 8 * MIN,
    locationJson: JSON.stringify({ latitude: 38.7, longitude: -9.1, name: 'Cafe', address: 'Rua 1' }) });
  check('outbound media by an upload id, a reply, a location', 14);
  repo.markAccepted(photo, 'wamid.photo', '111', NOW - 8 * MIN);
  repo.markAccepted(place, 'wamid.place', '222', NOW - 7 * MIN);
  check('accepted under the same contact and under another one', 14);
  t.match(JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE id = ?').pluck().get(photo) as string),
    { wamid: 'wamid.photo', status: 'accepted', media: { id: 'upload-1', caption: 'look "here"' }, reply_to: hello });

  // A queued or scheduled message is stored in its place in the queue, in its one INSERT; its priority from its
  // conversation (Ana, 111, wrote within 24 h: a reply; 333 never wrote: bulk).
  const window = NOW - 24 * 60 * MIN;
  const later = repo.insertOutbound({ userId: ana.id, to: '111', type: 'text', text: 'later', payloadJson: '{}', createdAt: NOW - 6 * MIN },
    { status: 'scheduled', sendAt: NOW + 60 * MIN, expiresAt: null, replyWindowStart: window });
  const bulk = repo.insertOutbound({ userId: ana.id, to: '333', type: 'text', text: 'news', payloadJson: '{}', createdAt: NOW - 5 * MIN },
    { status: 'queued', sendAt: NOW - 5 * MIN, expiresAt: NOW + 60 * MIN, replyWindowStart: window });
  check('stored queued and scheduled', 16);
  const placed = app.db.$client.prepare('SELECT status, send_at AS sendAt, expires_at AS expiresAt, priority FROM messages WHERE id = ?');
  t.same(placed.get(later), { status: 'scheduled', sendAt: NOW + 60 * MIN, expiresAt: null, priority: 0 });
  t.same(placed.get(bulk), { status: 'queued', sendAt: NOW - 5 * MIN, expiresAt: NOW + 60 * MIN, priority: 1 });
  t.equal(JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE id = ?').pluck().get(later) as string).status, 'scheduled');

  // Sanity: the check itself sees a stale row.
  app.db.$client.prepare("UPDATE messages SET status = 'sent' WHERE id = ?").run(pending);
  t.same(stale(app).stale, [pending]);
});

t.test('messages stored without their listed JSON are listed the same, and rendered at the next start', async (t) => {
  const { app, config } = await buildTestApp(t, {}, { now: () => new Date(NOW) });
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '1001', messagingToken: 'tok' });
  seedDemoInbox(app, ana.id, NOW);
  for (let i = 0; i < 210; i++) inbound(app, ana.id, { from: '222', at: NOW - 1000 * MIN + i * MIN, text: `m${i}`, type: i % 2 ? 'text' : 'image' });
  const queries = ['', '?limit=2', '?type=text', '?type=image&contact=222', '?contact=351912345678', '?filter=today'];
  const bodies = async (a: App) => Promise.all(queries.map(async (q) => {
    const res = await a.inject({ method: 'GET', url: `/api/user/${ana.id}/conversations${q}`, headers: bearer(a, ana) });
    t.equal(res.statusCode, 200, q);
    return res.body;
  }));
  const before = await bodies(app);

  // An older database, or rows imported with plain SQL: no listed JSON on every other message.
  const cleared = app.db.$client.prepare('UPDATE messages SET listed_json = NULL WHERE id % 2 = 0').run().changes;
  t.ok(cleared > 100);
  t.same(await bodies(app), before, 'rendered while listing, byte for byte');
  t.equal(app.db.$client.prepare('SELECT count(*) FROM messages WHERE listed_json IS NULL').pluck().get(), cleared, 'a listing stores nothing');
  await app.close();

  const again = await buildApp(config, { now: () => new Date(NOW) });
  t.teardown(() => again.close());
  t.equal(again.db.$client.prepare('SELECT count(*) FROM messages WHERE listed_json IS NULL').pluck().get(), 0, 'filled at start-up');
  t.same(stale(again).stale, []);
  t.same(await bodies(again), before);
});
