// Seeds a benchmark database: an admin and client users with many conversations and messages,
// and outbound messages whose wamids the status-callback scenario moves along.
import { openDatabase, type DB } from '../src/db/client';
import { createMessagesRepo } from '../src/db/messages-repo';
import { createUsersRepo } from '../src/db/users-repo';
import { listedMessage } from '../src/views/message-json';
import { hashPassword } from '../src/services/passwords';
import { createTokenCipher, resolveTokenKey } from '../src/support/token-cipher';

export interface UserSpec { email: string; phoneNumberId: string; token: string; messages: number; contacts: number; wamids: number }
export interface Seeded { id: number; phoneNumberId: string; token: string; wamids: string[]; contacts: number }

export const BENCH_PASSWORD = 'bench-password-123';

function seedMessages(db: DB, userId: number, spec: UserSpec, now: number): string[] {
  const sqlite = db.$client;
  // Each conversation belongs to a contact (its number and name), as the gateway stores them.
  const insertContact = sqlite.prepare('INSERT INTO contacts (user_id, wa_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const insertConversation = sqlite.prepare(`INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at,
    contact_id) VALUES (?, ?, ?, ?, ?, ?)`);
  const insertMessage = sqlite.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, text, to_number, wamid,
    status, status_rank, payload_json, created_at, status_updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const types = ['text', 'text', 'text', 'image', 'template', 'reaction'];
  const wamids: string[] = [];
  const span = 60 * 86_400_000; // the messages spread over the last 60 days
  sqlite.transaction(() => {
    const conversationIds: number[] = [];
    for (let c = 0; c < spec.contacts; c++) {
      const contactId = Number(insertContact.run(userId, String(15550000000 + c), `Contact ${c}`, now, now).lastInsertRowid);
      conversationIds.push(Number(insertConversation.run(userId, String(15550000000 + c), `Contact ${c}`, now, now, contactId).lastInsertRowid));
    }
    for (let i = 0; i < spec.messages; i++) {
      const at = now - span + Math.floor((span * i) / spec.messages);
      const inbound = i % 2 === 0;
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

/** Creates `admin@bench.local` and one CLIENT per spec (password BENCH_PASSWORD), with their histories. */
export async function seed(path: string, specs: UserSpec[]): Promise<Seeded[]> {
  const db = openDatabase(path);
  // The same generated key file the app will use for this database.
  const users = createUsersRepo(db, createTokenCipher(resolveTokenKey(undefined, path)));
  const now = new Date();
  const passwordHash = await hashPassword(BENCH_PASSWORD);
  users.create({ email: 'admin@bench.local', passwordHash, role: 'ADMIN' }, now);
  const seeded = specs.map((spec) => {
    const created = users.create({ email: spec.email, passwordHash, messagingPhoneNumberId: spec.phoneNumberId,
      messagingToken: spec.token, monthlyCredits: 100_000_000 }, now);
    if (!created.ok) throw new Error(`seed: ${spec.email} not created`);
    const wamids = seedMessages(db, created.user.id, spec, now.getTime());
    return { id: created.user.id, phoneNumberId: spec.phoneNumberId, token: spec.token, wamids, contacts: spec.contacts };
  });
  // Each message's listed JSON, as the gateway renders it when it stores a message: the gateway starts on a database
  // it could have written itself, not on a one-time backfill of 100,000 messages.
  createMessagesRepo(db, listedMessage).fillListedJson();
  db.$client.close();
  return seeded;
}

export const bigUser = (messages: number, wamids = 0): UserSpec =>
  ({ email: 'big@bench.local', phoneNumberId: '100000000000001', token: 'bench-token-big', messages, contacts: 500, wamids });
export const smallUser = (): UserSpec =>
  ({ email: 'small@bench.local', phoneNumberId: '100000000000002', token: 'bench-token-small', messages: 1_000, contacts: 20, wamids: 0 });
