// The page of conversations when many share the time of their last message (a busy number: the network's timestamps
// are in seconds): the page stops reading candidates early, and still holds exactly the conversations a full sort of
// every one would (newest last matching message first, equal times by the higher conversation id).
import t from 'tap';
import type { App } from '../src/app';
import type { PageQuery } from '../src/db/conversations-repo';
import { buildTestApp, createUser } from './helper';

const T = Date.parse('2026-11-20T12:00:00.000Z');

/** Conversations whose messages fall on a handful of seconds, so that last times tie; types vary per message. */
function seed(app: App, userId: number, conversations: number): void {
  const client = app.db.$client;
  const contact = client.prepare('INSERT INTO contacts (user_id, wa_id, name, created_at, updated_at) VALUES (?, ?, ?, 0, 0)');
  const conversation = client.prepare(`INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at, contact_id)
    VALUES (?, ?, ?, ?, ?, ?)`);
  const message = client.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, text, wamid, status, status_rank,
    payload_json, created_at) VALUES (?, ?, 'inbound', ?, 'hi', ?, 'received', 0, '{}', ?)`);
  // A fixed pseudo-random sequence: the same cases every run.
  let state = 7;
  const next = (n: number) => (state = (state * 48271) % 2147483647) % n;
  client.transaction(() => {
    for (let c = 0; c < conversations; c++) {
      const waId = `1555${String(c).padStart(7, '0')}`;
      const contactId = Number(contact.run(userId, waId, `Contact ${c}`).lastInsertRowid);
      const times = Array.from({ length: 1 + next(4) }, () => T - next(4) * 1000);
      const last = Math.max(...times);
      const id = Number(conversation.run(userId, waId, `Contact ${c}`, last, last, contactId).lastInsertRowid);
      times.forEach((at, m) => message.run(userId, id, next(3) === 0 ? 'image' : 'text', `wamid.${c}.${m}`, at));
    }
  })();
}

/** The page as a full sort of every conversation would give it. */
function expected(app: App, q: PageQuery): { id: number; lastAt: number }[] {
  const rows = app.db.$client.prepare(`SELECT conversation_id AS id, max(created_at) AS lastAt FROM messages WHERE user_id = ?
    AND (? IS NULL OR type = ?) AND created_at >= ? AND created_at < ? GROUP BY conversation_id`)
    .all(q.userId, q.type ?? null, q.type ?? null, q.from, q.to) as { id: number; lastAt: number }[];
  // `before`: a conversation whose last matching message is not older was on an earlier page.
  return rows.filter((r) => r.lastAt < (q.before ?? Infinity)).sort((a, b) => b.lastAt - a.lastAt || b.id - a.id).slice(0, q.limit);
}

t.test('conversations tied on their last time: every page equals a full sort of all of them', async (t) => {
  const { app } = await buildTestApp(t);
  const user = await createUser(app, { email: 'busy@example.com', messagingPhoneNumberId: '900000000000002' });
  seed(app, user.id, 120);
  // Ends just past a message time too: then a page's bound is that time for every newer candidate, and ties on it.
  const ranges = [{ from: 0, to: Number.MAX_SAFE_INTEGER }, { from: 0, to: T - 1000 }, { from: 0, to: T - 999 }, { from: T - 2000, to: T }];
  let cases = 0;
  for (const range of ranges) {
    for (const type of [undefined, 'image']) {
      for (const before of [undefined, T, T - 999, T - 2500]) {
        for (const limit of [1, 7, 50, 200]) {
          const q: PageQuery = { userId: user.id, ...range, type, before, limit };
          const page = app.conversationsRepo.page(q).map((s) => ({ id: s.id, lastAt: s.lastAt }));
          t.same(page, expected(app, q), JSON.stringify(q));
          cases += 1;
        }
      }
    }
  }
  t.equal(cases, 128);
});
