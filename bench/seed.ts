// Seeds a benchmark database: an admin and client users with many conversations and messages,
// and outbound messages whose wamids the status-callback scenario moves along. Written through SQL that every release
// since the first one understands, so that `--against <ref>` can seed one database with that ref's own schema.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { openDatabase } from '../src/db/client';
import { createMessagesRepo } from '../src/db/messages-repo';
import { listedMessage } from '../src/views/message-json';
import { hashPassword } from '../src/services/passwords';

export interface UserSpec {
  email: string; phoneNumberId: string; token: string; messages: number; contacts: number; wamids: number;
  /** Every message outbound (default: every other one inbound). */
  outboundOnly?: boolean;
}
export interface Seeded { id: number; phoneNumberId: string; token: string; wamids: string[]; contacts: number }

export const BENCH_PASSWORD = 'bench-password-123';

function seedMessages(sqlite: Database.Database, userId: number, spec: UserSpec, now: number): string[] {
  // Each conversation belongs to a contact (its number and name), as the gateway stores them; before contacts existed
  // (an older ref's schema), a conversation was keyed by the number alone and the upgrade makes its contact.
  const contacts = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'contacts'").get() !== undefined;
  const insertContact = contacts
    ? sqlite.prepare<[number, string, string, number, number]>('INSERT INTO contacts (user_id, wa_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
    : undefined;
  const insertConversation = sqlite.prepare(contacts
    ? 'INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at, contact_id) VALUES (?, ?, ?, ?, ?, ?)'
    : 'INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at) VALUES (?, ?, ?, ?, ?)');
  const insertMessage = sqlite.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, text, to_number, wamid,
    status, status_rank, payload_json, created_at, status_updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const types = ['text', 'text', 'text', 'image', 'template', 'reaction'];
  const wamids: string[] = [];
  const span = 60 * 86_400_000; // the messages spread over the last 60 days
  sqlite.transaction(() => {
    const conversationIds: number[] = [];
    for (let c = 0; c < spec.contacts; c++) {
      const number = String(15550000000 + c);
      const contact = insertContact ? [Number(insertContact.run(userId, number, `Contact ${c}`, now, now).lastInsertRowid)] : [];
      conversationIds.push(Number(insertConversation.run(userId, number, `Contact ${c}`, now, now, ...contact).lastInsertRowid));
    }
    for (let i = 0; i < spec.messages; i++) {
      const at = now - span + Math.floor((span * i) / spec.messages);
      const inbound = !spec.outboundOnly && i % 2 === 0;
      const type = types[i % types.length]!;
      const wamid = `wamid.bench${userId}.${i}`;
      if (!inbound && wamids.length < spec.wamids) wamids.push(wamid);
      insertMessage.run(userId, conversationIds[i % spec.contacts]!, inbound ? 'inbound' : 'outbound', type,
        type === 'template' ? null : `message ${i}`, inbound ? null : String(15550000000 + (i % spec.contacts)), wamid,
        inbound ? 'received' : 'accepted', inbound ? 0 : 1, '{}', at, at);
    }
    // As the gateway keeps them: the conversation's newest message and newest inbound message.
    sqlite.prepare(`UPDATE conversations SET
      last_message_at = (SELECT max(created_at) FROM messages WHERE conversation_id = conversations.id),
      last_inbound_at = (SELECT max(created_at) FROM messages WHERE conversation_id = conversations.id AND direction = 'inbound')
      WHERE user_id = ?`).run(userId);
  })();
  return wamids;
}

/**
 * Creates `admin@bench.local` and one CLIENT per spec (password BENCH_PASSWORD), with their histories. With
 * `migrations` (an older ref's folder), the database gets that schema and no listed JSON: each build renders what it
 * lacks at its start, and this tree upgrades it as it would a real one. Tokens are stored in plain text, as the oldest
 * releases did: this tree encrypts them at its start.
 */
export async function seed(path: string, specs: UserSpec[], migrations?: string): Promise<Seeded[]> {
  // This tree's own schema by its own code; another's by its migrations.
  const db = migrations === undefined ? openDatabase(path) : undefined;
  if (!db) mkdirSync(dirname(path), { recursive: true });
  const sqlite = db?.$client ?? new Database(path);
  if (migrations !== undefined) migrate(drizzle(sqlite), { migrationsFolder: migrations });
  const now = Date.now();
  const passwordHash = await hashPassword(BENCH_PASSWORD);
  const insertUser = sqlite.prepare(`INSERT INTO users (email, password_hash, role, messaging_phone_number_id, messaging_token,
    monthly_credits, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  insertUser.run('admin@bench.local', passwordHash, 'ADMIN', null, null, 0, now, now);
  const seeded = specs.map((spec) => {
    const id = Number(insertUser.run(spec.email, passwordHash, 'CLIENT', spec.phoneNumberId, spec.token, 100_000_000, now, now).lastInsertRowid);
    const wamids = seedMessages(sqlite, id, spec, now);
    return { id, phoneNumberId: spec.phoneNumberId, token: spec.token, wamids, contacts: spec.contacts };
  });
  // Each message's listed JSON, as the gateway renders it when it stores a message: this tree starts on a database
  // it could have written itself, not on a one-time backfill of 100,000 messages.
  if (db) createMessagesRepo(db, listedMessage).fillListedJson();
  sqlite.close();
  return seeded;
}

export const bigUser = (messages: number, wamids = 0): UserSpec =>
  ({ email: 'big@bench.local', phoneNumberId: '100000000000001', token: 'bench-token-big', messages, contacts: 500, wamids });
/**
 * The user the bench's callbacks go to, with a history as large as the big user's: the callbacks write where as much
 * lies, and the big user's listings read the same data in every round (callbacks to it would lengthen what each round
 * lists). All its messages are outbound with a wamid, for status callbacks that each move one.
 */
export const callbacksUser = (messages: number): UserSpec => ({
  ...bigUser(messages, messages), email: 'callbacks@bench.local', phoneNumberId: '100000000000003', token: 'bench-token-callbacks', outboundOnly: true,
});
/** Users that only send, each with a phone number of its own: the send scenario spreads over them, since the network
 * (and so the gateway's pacing) takes at most 1,000 messages per second from one number. */
export const senders = (count: number): UserSpec[] => Array.from({ length: count }, (_, i) => ({
  email: `sender${i + 1}@bench.local`, phoneNumberId: String(100000000000101 + i), token: `bench-token-sender-${i + 1}`, messages: 0, contacts: 0, wamids: 0,
}));
export const smallUser = (): UserSpec =>
  ({ email: 'small@bench.local', phoneNumberId: '100000000000002', token: 'bench-token-small', messages: 1_000, contacts: 20, wamids: 0 });

/** The session cookie of a seeded account (password BENCH_PASSWORD). */
export async function login(url: string, email: string): Promise<string> {
  const response = await fetch(url + '/api/login', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  });
  if (!response.ok) throw new Error(`login ${email}: ${response.status}`);
  return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/**
 * Builds that pace sends per phone number (default 80/s) get the highest rate for the sending user, as an operator
 * with a high-throughput number would set it: the send scenario measures the gateway's cost, not the pace.
 * Builds before pacing refuse the unknown field (and do not pace): nothing to do there.
 */
export async function unpaced(url: string, userId: number): Promise<void> {
  await fetch(`${url}/api/user/update/${userId}`, {
    method: 'PUT', headers: { 'content-type': 'application/json', cookie: await login(url, 'admin@bench.local') },
    body: JSON.stringify({ messaging_rate: 1000 }),
  });
}
