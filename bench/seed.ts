// Seeds a benchmark database: an admin, a client with many conversations and messages,
// and outbound messages whose wamids the status-callback scenario moves along.
import { openDatabase } from '../src/db/client';
import { createUsersRepo } from '../src/db/users-repo';
import { hashPassword } from '../src/services/passwords';
import { createTokenCipher, resolveTokenKey } from '../src/token-cipher';

export interface Seeded { clientId: number; phoneNumberId: string; wamids: string[]; contacts: number }

export const BENCH_PASSWORD = 'bench-password-123';

export async function seed(path: string, messageCount: number, contacts: number, wamidCount: number): Promise<Seeded> {
  const db = openDatabase(path);
  // The same generated key file the app will use for this database.
  const users = createUsersRepo(db, createTokenCipher(resolveTokenKey(undefined, path)));
  const now = new Date();
  const passwordHash = await hashPassword(BENCH_PASSWORD);
  users.create({ email: 'admin@bench.local', passwordHash, role: 'ADMIN' }, now);
  const phoneNumberId = '100000000000001';
  const created = users.create({ email: 'client@bench.local', passwordHash, messagingPhoneNumberId: phoneNumberId,
    messagingToken: 'bench-token', monthlyCredits: 1_000_000 }, now);
  if (!created.ok) throw new Error('seed: client not created');
  const clientId = created.user.id;

  const sqlite = db.$client;
  const insertConversation = sqlite.prepare(
    'INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at) VALUES (?, ?, ?, ?, ?)');
  const insertMessage = sqlite.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, text, to_number, wamid,
    status, status_rank, payload_json, created_at, status_updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const types = ['text', 'text', 'text', 'image', 'template', 'reaction'];
  const wamids: string[] = [];
  const span = 60 * 86_400_000; // the messages spread over the last 60 days
  sqlite.transaction(() => {
    const conversationIds: number[] = [];
    for (let c = 0; c < contacts; c++) {
      const waId = String(15550000000 + c);
      conversationIds.push(Number(insertConversation.run(clientId, waId, `Contact ${c}`, now.getTime(), now.getTime()).lastInsertRowid));
    }
    for (let i = 0; i < messageCount; i++) {
      const at = now.getTime() - span + Math.floor((span * i) / messageCount);
      const conversationId = conversationIds[i % contacts]!;
      const inbound = i % 2 === 0;
      const type = types[i % types.length]!;
      const wamid = `wamid.bench${i}`;
      if (!inbound && wamids.length < wamidCount) wamids.push(wamid);
      insertMessage.run(clientId, conversationId, inbound ? 'inbound' : 'outbound', type, type === 'template' ? null : `message ${i}`,
        inbound ? null : String(15550000000 + (i % contacts)), wamid, inbound ? 'received' : 'accepted', inbound ? 0 : 1,
        '{}', at, at);
    }
    // As the gateway keeps them: the conversation's newest message and newest inbound message.
    sqlite.exec(`UPDATE conversations SET
      last_message_at = (SELECT max(created_at) FROM messages WHERE conversation_id = conversations.id),
      last_inbound_at = (SELECT max(created_at) FROM messages WHERE conversation_id = conversations.id AND direction = 'inbound')`);
  })();
  db.$client.close();
  return { clientId, phoneNumberId, wamids, contacts };
}
