// Upgrading a database of the previous release (its migrations end with 0004_media_archive: conversations keyed by phone number) loses
// nothing: every conversation becomes a contact with the same id, and every message, status, media row and credit stays.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import t from 'tap';
import { buildApp } from '../src/app';
import { projectRoot } from '../src/config';
import { bearer, tempDir, testConfig } from './helper';
import { deliver, envelope, networkSeconds as seconds, statusItem } from './fixtures/webhooks';

/** The last migration of the previous release: this release adds sessions' epochs, the event log and contacts after it. */
const PREVIOUS_RELEASE_LAST = '0004_media_archive';
const T0 = 1_795_000_000_000;

/** A database file `gateway.db` in `dir` with the schema of the migrations up to `last` (included) only, open. */
function databaseThrough(dir: string, last: string): Database.Database {
  const migrations = join(dir, 'migrations');
  cpSync(join(projectRoot, 'data', 'migrations'), migrations, { recursive: true });
  const journalPath = join(migrations, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { idx: number; tag: string }[] };
  const first = journal.entries.find((e) => e.tag === last)!.idx + 1;
  for (const entry of journal.entries.filter((e) => e.idx >= first)) {
    rmSync(join(migrations, `${entry.tag}.sql`));
    rmSync(join(migrations, 'meta', `${entry.tag.slice(0, 4)}_snapshot.json`), { force: true });
  }
  journal.entries = journal.entries.filter((e) => e.idx < first);
  writeFileSync(journalPath, JSON.stringify(journal));
  const sqlite = new Database(join(dir, 'gateway.db'));
  migrate(drizzle(sqlite), { migrationsFolder: migrations });
  return sqlite;
}

/** A database file written with the previous release's schema (its migrations only), filled through SQL. */
function previousReleaseDatabase(dir: string): string {
  const sqlite = databaseThrough(dir, PREVIOUS_RELEASE_LAST);
  const path = sqlite.name;
  const run = (sql: string, ...params: unknown[]) => sqlite.prepare(sql).run(...params);
  run(`INSERT INTO users (id, email, password_hash, role, messaging_phone_number_id, monthly_credits, created_at, updated_at)
    VALUES (1, 'ana@example.com', 'x', 'CLIENT', '900000000000001', 100, ${T0}, ${T0})`);
  run(`INSERT INTO conversations (id, user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at) VALUES
    (1, 1, '15551230001', 'Ana Lima', ${T0 + 20_000}, ${T0 + 12_000}), (2, 1, '16505551234', NULL, ${T0 + 40_000}, ${T0 + 40_000})`);
  const message = sqlite.prepare(`INSERT INTO messages (id, user_id, conversation_id, direction, type, text, to_number, wamid, status, status_rank,
    error_json, payload_json, template_json, media_json, location_json, reply_to, created_at, status_updated_at)
    VALUES (@id, 1, @c, @dir, @type, @text, @to, @wamid, @status, @rank, @error, '{}', @template, @media, @location, @reply, @at, @updated)`);
  const base = { c: 1, dir: 'inbound', text: null, to: null, status: 'received', rank: 0, error: null, template: null, media: null, location: null, reply: null, updated: null };
  const inbound = ['text', 'image', 'location', 'contacts', 'interactive', 'button', 'reaction', 'order', 'system', 'unsupported'];
  inbound.forEach((type, i) => message.run({
    ...base, id: i + 1, type, wamid: `wamid.in.${i}`, at: T0 + i * 1000, text: type === 'image' ? null : `${type} text`,
    // As the previous release's download worker left them: stored, or failed for good.
    media: type === 'image' ? JSON.stringify({ id: 'm1', mime_type: 'image/jpeg', sha256: 'abc=', filename: null, stored: true, error: null }) : null,
    location: type === 'location' ? JSON.stringify({ latitude: 38.7, longitude: -9.1, name: 'Cafe', address: null }) : null,
    reply: type === 'reaction' ? 'wamid.out.0' : null,
    error: type === 'unsupported' ? JSON.stringify({ code: 131051, title: 'Message type unknown', details: null }) : null,
  }));
  message.run({ ...base, id: 11, dir: 'outbound', type: 'text', text: 'Nice!', to: '15551230001', wamid: 'wamid.out.0', status: 'read', rank: 5, at: T0 + 15_000, updated: T0 + 18_000 });
  message.run({ ...base, id: 12, dir: 'outbound', type: 'template', to: '15551230001', wamid: 'wamid.out.1', status: 'failed', rank: 3, at: T0 + 20_000, updated: T0 + 21_000,
    template: JSON.stringify({ name: 'order_update', language: 'en_US', params: ['Ana'] }), error: JSON.stringify({ code: 131047, title: 'Re-engagement message', details: 'More than 24 hours' }) });
  ['sticker', 'audio', 'video', 'document'].forEach((type, i) => message.run({
    ...base, id: 13 + i, c: 2, type, wamid: `wamid.b.${i}`, at: T0 + 30_000 + i * 3000, text: type === 'document' ? 'invoice.pdf' : null,
    media: JSON.stringify({ id: `mb${i}`, mime_type: 'application/octet-stream', sha256: 'def=', filename: type === 'document' ? 'invoice.pdf' : null,
      stored: false, error: i === 0 ? 'too_large' : null }),
  }));
  const status = sqlite.prepare('INSERT INTO message_statuses (message_id, status, at, error_json) VALUES (?, ?, ?, ?)');
  status.run(11, 'sent', T0 + 16_000, null);
  status.run(11, 'delivered', T0 + 17_000, null);
  status.run(11, 'read', T0 + 18_000, null);
  status.run(12, 'failed', T0 + 21_000, JSON.stringify({ code: 131047, title: 'Re-engagement message', details: 'More than 24 hours' }));
  run(`INSERT INTO media_downloads (message_id, state, attempts, mime_type, size, settled_at) VALUES (2, 'stored', 1, 'image/jpeg', 10, ${T0})`);
  // The previous release kept the archive in `media/` beside the database, one file per message id.
  mkdirSync(join(dir, 'media'), { mode: 0o700 });
  writeFileSync(join(dir, 'media', '2'), 'ten bytes!', { mode: 0o600 });
  run(`INSERT INTO media_downloads (message_id, state, attempts, error) VALUES (13, 'failed', 5, 'too_large')`);
  run(`INSERT INTO credit_usage (user_id, month, used) VALUES (1, '2026-11', 2)`);
  run(`INSERT INTO orphan_statuses (user_id, wamid, status, at, received_at) VALUES (1, 'wamid.unknown', 'sent', ${T0}, ${T0})`);
  sqlite.close();
  return path;
}

const TABLES = ['users', 'conversations', 'messages', 'media_downloads', 'credit_usage', 'orphan_statuses'];
/** Status histories, in a table of their own before 0013_statuses_in_row, in each message's row after it. */
const STATUSES_BEFORE = 'SELECT message_id, status, at, error_json FROM message_statuses ORDER BY id';
const STATUSES_AFTER = `SELECT m.id AS message_id, json_extract(j.value, '$[0]') AS status, json_extract(j.value, '$[1]') AS at,
  json_extract(j.value, '$[2]') AS error_json FROM messages m, json_each(m.statuses_json) j ORDER BY m.id, j.key`;
const MESSAGE_COLUMNS = `id, conversation_id, direction, type, text, to_number, wamid, status, status_rank, error_json, payload_json,
  template_json, media_json, location_json, reply_to, created_at, status_updated_at`;

const hasTable = (sqlite: Database.Database, name: string) =>
  sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

function snapshot(path: string) {
  const sqlite = new Database(path, { readonly: true });
  const counts = Object.fromEntries(TABLES.map((table) => [table, sqlite.prepare(`SELECT count(*) FROM ${table}`).pluck().get()]));
  const rows = {
    messages: sqlite.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages ORDER BY id`).all(),
    statuses: sqlite.prepare(hasTable(sqlite, 'message_statuses') ? STATUSES_BEFORE : STATUSES_AFTER).all(),
    media: sqlite.prepare('SELECT * FROM media_downloads ORDER BY message_id').all(),
    credits: sqlite.prepare('SELECT * FROM credit_usage').all(),
    conversations: sqlite.prepare('SELECT id, user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at FROM conversations ORDER BY id').all(),
  };
  sqlite.close();
  return { counts, rows };
}

t.test('a database of the previous release upgrades at start-up without losing a message, status, media row or credit', async (t) => {
  const dir = tempDir(t);
  const path = previousReleaseDatabase(dir);
  const before = snapshot(path);
  t.same(before.counts, { users: 1, conversations: 2, messages: 16, media_downloads: 2, credit_usage: 1, orphan_statuses: 1 });
  t.equal(before.rows.statuses.length, 4);

  const app = await buildApp(testConfig(dir, { databasePath: path }));
  t.teardown(() => app.close());
  await app.ready();
  const after = snapshot(path);
  t.same(after.counts, before.counts, 'every table keeps its rows');
  t.same(after.rows, before.rows, 'every message, status, media row, credit and conversation is unchanged');
  const contacts = app.db.$client.prepare('SELECT id, user_id AS userId, wa_id AS waId, bsuid, name FROM contacts ORDER BY id').all();
  t.same(contacts, [
    { id: 1, userId: 1, waId: '15551230001', bsuid: null, name: 'Ana Lima' },
    { id: 2, userId: 1, waId: '16505551234', bsuid: null, name: null },
  ], 'each conversation became a contact with its id');

  const user = app.usersRepo.findById(1)!;
  const res = await app.inject({ method: 'GET', url: '/api/user/1/conversations', headers: bearer(app, user) });
  t.equal(res.statusCode, 200);
  const listed = res.json() as { contact: Record<string, unknown>; message_count: number; service_window_expires_at: string | null; messages: Record<string, unknown>[] }[];
  t.same(listed.map((c) => c.contact), [
    { id: 2, wa_id: '16505551234', user_id: null, username: null, name: null },
    { id: 1, wa_id: '15551230001', user_id: null, username: null, name: 'Ana Lima' },
  ]);
  t.same(listed.map((c) => c.message_count), [4, 12]);
  t.same(listed.map((c) => c.service_window_expires_at), [new Date(T0 + 40_000 + 24 * 3600_000).toISOString(), new Date(T0 + 12_000 + 24 * 3600_000).toISOString()]);
  const all = listed.flatMap((c) => c.messages);
  t.same(all.map((m) => m.id).sort((a, b) => Number(a) - Number(b)), before.rows.messages.map((m) => (m as { id: number }).id));
  for (const m of all) {
    const row = before.rows.messages.find((r) => (r as { id: number }).id === m.id) as Record<string, unknown>;
    t.match(m, { wamid: row.wamid, direction: row.direction, type: row.type, text: row.text, status: row.status,
      created_at: new Date(row.created_at as number).toISOString() }, `message ${String(m.id)}`);
  }
  t.match(all.find((m) => m.id === 11), { origin: 'api', statuses: [{ status: 'sent' }, { status: 'delivered' }, { status: 'read' }] });
  t.match(all.find((m) => m.id === 2), { media: { id: 'm1', stored: true, url: '/api/media/2' } });
  t.ok(existsSync(join(dir, 'gateway.media', '2')), "the archive moved to the database's own folder");
  const file = await app.inject({ method: 'GET', url: '/api/media/2', headers: bearer(app, app.usersRepo.findById(1)!) });
  t.equal(file.body, 'ten bytes!', 'the archived file is served after the upgrade');
  t.match(all.find((m) => m.id === 13), { media: { stored: false, error: 'too_large' } });

  // The upgraded contacts take new messages in their own conversation.
  const sent = app.messagesRepo.insertInbound({ userId: 1, contactWaId: '15551230001', wamid: 'wamid.new', type: 'text', text: 'again', payloadJson: '{}', createdAt: T0 + 50_000 });
  t.ok(sent);
  t.equal(app.messagesRepo.conversationOf(app.messagesRepo.findById(17)!.id)!.id, 1);
});

/** A database through migration `last` with one user (phone number id 900000000000001), its contact Ana and their conversation. */
function oneContactDatabase(dir: string, last: string, lastMessageAt: number, lastInboundAt: number): Database.Database {
  const sqlite = databaseThrough(dir, last);
  sqlite.exec(`INSERT INTO users (id, email, password_hash, role, messaging_phone_number_id, monthly_credits, created_at, updated_at)
      VALUES (1, 'ana@example.com', 'x', 'CLIENT', '900000000000001', 100, ${T0}, ${T0});
    INSERT INTO contacts (id, user_id, wa_id, name, created_at, updated_at) VALUES (1, 1, '15551230001', 'Ana', ${T0}, ${T0});
    INSERT INTO conversations (id, user_id, contact_wa_id, last_message_at, last_inbound_at, contact_id)
      VALUES (1, 1, '15551230001', ${lastMessageAt}, ${lastInboundAt}, 1);`);
  return sqlite;
}

t.test('a database of the release before texts left the per-type index keeps every message, and each type view its order', async (t) => {
  const dir = tempDir(t);
  const sqlite = oneContactDatabase(dir, '0011_events_by_id', T0 + 2000, T0 + 2000);
  const path = sqlite.name;
  // Two instants, three messages each, stored newest first: a tie on the time is ordered by id.
  const message = sqlite.prepare(`INSERT INTO messages (id, user_id, conversation_id, direction, type, text, wamid, status, payload_json, created_at)
    VALUES (?, 1, 1, 'inbound', ?, ?, ?, 'received', '{}', ?)`);
  [['text', 2000], ['image', 2000], ['text', 2000], ['text', 1000], ['image', 1000], ['text', 1000]].forEach(([type, at], i) =>
    message.run(i + 1, type, type === 'text' ? `text ${i + 1}` : null, `wamid.${i + 1}`, T0 + Number(at)));
  sqlite.close();
  const before = snapshot(path);

  const app = await buildApp(testConfig(dir, { databasePath: path }));
  t.teardown(() => app.close());
  await app.ready();
  t.same(snapshot(path), before, 'every row is unchanged');
  const indexes = app.db.$client.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'messages_conversation_%' ORDER BY name").all();
  t.same(indexes, [
    { name: 'messages_conversation_created', sql: 'CREATE INDEX `messages_conversation_created` ON `messages` (`conversation_id`,`created_at`,`id`,`type`)' },
    { name: 'messages_conversation_id', sql: 'CREATE INDEX `messages_conversation_id` ON `messages` (`conversation_id`,`id`)' },
    { name: 'messages_conversation_type_created', sql: "CREATE INDEX `messages_conversation_type_created` ON `messages` (`conversation_id`,`type`,`created_at`) WHERE type <> 'text'" },
  ]);
  const headers = bearer(app, app.usersRepo.findById(1)!);
  const ids = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/user/1/conversations?filter=all${query}`, headers });
    t.equal(res.statusCode, 200, query);
    return (res.json() as { message_count: number; messages: { id: number }[] }[]).map((c) => [c.message_count, c.messages.map((m) => m.id)]);
  };
  t.same(await ids(''), [[6, [4, 5, 6, 1, 2, 3]]]);
  t.same(await ids('&type=text'), [[4, [4, 6, 1, 3]]]);
  t.same(await ids('&type=image'), [[2, [5, 2]]]);
});

t.test('a database of the release before histories moved into the messages keeps every status in order, every message, media file and credit, and goes on from it', async (t) => {
  const dir = tempDir(t);
  const sqlite = oneContactDatabase(dir, '0012_text_outside_type_index', T0 + 3000, T0);
  const path = sqlite.name;
  const message = sqlite.prepare(`INSERT INTO messages (id, user_id, conversation_id, direction, type, text, to_number, wamid, status, status_rank,
    payload_json, created_at, status_updated_at) VALUES (?, 1, 1, ?, 'text', 'hi', ?, ?, ?, ?, '{}', ?, ?)`);
  message.run(1, 'outbound', '15551230001', 'wamid.out.1', 'read', 5, T0 + 500, T0 + 3000);
  message.run(2, 'outbound', '15551230001', 'wamid.out.2', 'accepted', 1, T0 + 600, T0 + 600);
  message.run(3, 'inbound', null, 'wamid.in.3', 'received', 0, T0, null);
  // Stored out of order, with a tie on the time: read before played, both at +3 s.
  const status = sqlite.prepare('INSERT INTO message_statuses (message_id, status, at, error_json, pricing_json) VALUES (1, ?, ?, ?, ?)');
  const pricing = JSON.stringify({ billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' });
  status.run('read', T0 + 3000, null, null);
  status.run('sent', T0 + 1000, null, null);
  status.run('delivered', T0 + 2000, null, pricing);
  status.run('played', T0 + 3000, null, null);
  // An archived image and a month's credits: untouched by this upgrade, still there after it.
  message.run(4, 'inbound', null, 'wamid.in.4', 'received', 0, T0 + 100, null);
  sqlite.prepare(`UPDATE messages SET type = 'image', text = NULL, media_json = ? WHERE id = 4`)
    .run(JSON.stringify({ id: 'm4', mime_type: 'image/jpeg', sha256: 'abc=', filename: null, stored: true, error: null }));
  sqlite.exec(`INSERT INTO media_downloads (message_id, state, attempts, mime_type, size, settled_at) VALUES (4, 'stored', 1, 'image/jpeg', 10, ${T0});
    INSERT INTO credit_usage (user_id, month, used) VALUES (1, '2026-11', 3);`);
  mkdirSync(join(dir, 'gateway.media'), { mode: 0o700 });
  writeFileSync(join(dir, 'gateway.media', '4'), 'ten bytes!', { mode: 0o600 });
  sqlite.close();
  const before = snapshot(path);

  const app = await buildApp(testConfig(dir, { databasePath: path, messagingAppSecret: 'upgrade-secret' }));
  t.teardown(() => app.close());
  await app.ready();
  const client = app.db.$client;
  t.equal(client.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'message_statuses%'").pluck().get(), 0, 'the table and its index are gone');
  const history = [['sent', T0 + 1000, null], ['delivered', T0 + 2000, pricing], ['read', T0 + 3000, null], ['played', T0 + 3000, null]];
  t.same(app.messagesRepo.history(1).map((h) => [h.status, h.at, h.pricingJson]), history, 'every status, by time, ties in the order stored');
  t.same(app.messagesRepo.history(2), []);
  const { statuses: _before, ...restBefore } = before.rows;
  const after = snapshot(path);
  const { statuses: _after, ...restAfter } = after.rows;
  t.same(restAfter, restBefore, 'every message, media row, credit and conversation is unchanged');
  t.same(after.counts, before.counts);
  t.same(client.prepare('SELECT id, statuses_json AS statuses FROM messages WHERE id IN (2, 3) ORDER BY id').all(),
    [{ id: 2, statuses: '[]' }, { id: 3, statuses: null }], 'an outbound message without statuses has an empty history, an inbound one none');

  const res = await app.inject({ method: 'GET', url: '/api/user/1/conversations?filter=all', headers: bearer(app, app.usersRepo.findById(1)!) });
  const listed = (res.json() as { messages: { id: number; statuses?: { status: string; at: string }[] }[] }[])[0]!.messages.find((m) => m.id === 1)!;
  t.same(listed.statuses!.map((s) => [s.status, s.at]), history.map(([s, at]) => [s, new Date(at as number).toISOString()]));
  const file = await app.inject({ method: 'GET', url: '/api/media/4', headers: bearer(app, app.usersRepo.findById(1)!) });
  t.equal(file.body, 'ten bytes!', 'the archived file is served after the upgrade');

  // The network delivers one again (nothing changes) and a new one (it joins the end).
  const callback = (items: unknown[]) => deliver(app, envelope('900000000000001', { statuses: items }), 'upgrade-secret');
  await callback([statusItem('wamid.out.1', 'delivered', seconds(T0 + 2000)), statusItem('wamid.out.1', 'deleted', seconds(T0 + 9000))]);
  t.same(app.messagesRepo.history(1).map((h) => h.status), ['sent', 'delivered', 'read', 'played', 'deleted']);
});
