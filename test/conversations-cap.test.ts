// One answer holds at most 5,000 messages: a page ends after the last conversation that fits, and `before` walks on.
import t from 'tap';
import type { App } from '../src/app';
import type { ConversationSummary } from '../src/db/conversations-repo';
import { MESSAGES_PER_ANSWER, withinMessageCap } from '../src/services/conversations';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';

const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const MIN = 60_000;

/** `conversations` × `perConversation` inbound messages, straight into the tables in one transaction (test data only). */
function seed(app: App, userId: number, conversations: number, perConversation: number): void {
  const client = app.db.$client;
  const contact = client.prepare('INSERT INTO contacts (user_id, wa_id, name, created_at, updated_at) VALUES (?, ?, ?, 0, 0)');
  const conversation = client.prepare(`INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at, contact_id)
    VALUES (?, ?, ?, ?, ?, ?)`);
  const message = client.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, text, wamid, status, status_rank,
    payload_json, created_at) VALUES (?, ?, 'inbound', 'text', ?, ?, 'received', 0, '{}', ?)`);
  client.transaction(() => {
    for (let c = 0; c < conversations; c++) {
      // Conversation c's messages end c minutes before NOW: distinct last times, newest first is c = 0, 1, 2 …
      const last = NOW - c * MIN - MIN;
      const waId = `1555${String(c).padStart(7, '0')}`;
      const contactId = Number(contact.run(userId, waId, `Contact ${c}`).lastInsertRowid);
      const id = Number(conversation.run(userId, waId, `Contact ${c}`, last, last, contactId).lastInsertRowid);
      for (let m = 0; m < perConversation; m++) message.run(userId, id, `m${m}`, `wamid.${c}.${m}`, last - (perConversation - 1 - m) * 10);
    }
  })();
}

interface Answer { contact: { wa_id: string }; last_message_at: string; message_count: number; messages: unknown[] }

t.test('40,000 messages, limit=200: 25 conversations of 200 per answer, and `before` walks every one exactly once', async (t) => {
  const { app } = await buildTestApp(t, {}, { now: () => new Date(NOW) });
  const user = await createUser(app, { email: 'busy@example.com', messagingPhoneNumberId: '900000000000001' });
  seed(app, user.id, 200, 200);
  const auth = bearer(app, user);

  const seen: string[] = [];
  let before: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations?limit=200${before ? `&before=${before}` : ''}`, headers: auth });
    t.equal(res.statusCode, 200);
    const answer = res.json() as Answer[];
    if (answer.length === 0) break;
    const messages = answer.reduce((sum, c) => sum + c.messages.length, 0);
    t.ok(messages <= MESSAGES_PER_ANSWER, `page ${page}: ${messages} messages`);
    if (page === 0) {
      t.equal(answer.length, 25);
      t.equal(messages, 5000);
      t.ok(answer.every((c) => c.message_count === 200 && c.messages.length === 200));
    }
    seen.push(...answer.map((c) => c.contact.wa_id));
    before = answer.at(-1)!.last_message_at;
  }
  t.equal(seen.length, 200);
  t.same(seen, Array.from({ length: 200 }, (_, c) => `1555${String(c).padStart(7, '0')}`), 'every conversation once, newest first');

  // A smaller limit is not affected by the cap.
  const small = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations?limit=10`, headers: auth });
  t.equal((small.json() as Answer[]).length, 10);
});

t.test('the admin thread page of the same user shows one conversation of at most 200 messages', async (t) => {
  const { app } = await buildTestApp(t, {}, { now: () => new Date(NOW) });
  const admin = await createAdmin(app);
  const user = await createUser(app, { email: 'busy@example.com', messagingPhoneNumberId: '900000000000001' });
  seed(app, user.id, 200, 200);
  const res = await app.inject({ method: 'GET', url: `/admin/user/${user.id}/conversation-thread`, headers: { cookie: `token=${app.issueToken(admin)}` } });
  t.equal(res.statusCode, 200);
  t.equal(res.body.match(/<article class="bubble /g)?.length, 200);
  t.equal(res.body.match(/<li><a class="contact/g)?.length, 200, 'the contact list carries no messages');
});

const summary = (id: number, count: number, lastAt: number): ConversationSummary =>
  ({ id, count, lastAt, contactId: id, contactWaId: String(id), contactBsuid: null, contactParentBsuid: null, contactUsername: null,
    contactName: null, contactAliasesJson: '[]', lastInboundAt: null });

t.test('the cut: after the last conversation that fits, at least one, never inside a group with the same last time', async (t) => {
  const ids = (list: ConversationSummary[]) => withinMessageCap(list).map((s) => s.id);
  const uneven = Array.from({ length: 40 }, (_, i) => summary(i, i % 2 === 0 ? 150 : 400, 1000 - i));
  // Shown: 150, 200, 150, 200 … (350 per pair): 14 pairs = 4,900, the 29th (150) makes 5,050.
  t.same(ids(uneven), Array.from({ length: 28 }, (_, i) => i));
  t.same(ids(Array.from({ length: 10 }, (_, i) => summary(i, 100, 1000 - i))).length, 10, 'under the cap: the whole page');
  const tied = Array.from({ length: 30 }, (_, i) => summary(i, 200, i < 23 ? 1000 - i : 500));
  t.same(ids(tied), Array.from({ length: 23 }, (_, i) => i), 'conversations 23…29 share a time: the page ends before them');
  const allTied = Array.from({ length: 30 }, (_, i) => summary(i, 200, 500));
  t.equal(ids(allTied).length, 25, 'a group that starts the page cannot be avoided: filled up to the cap');
  t.same(ids([summary(1, 200, 9), ...Array.from({ length: 30 }, (_, i) => summary(i + 2, 200, 5))]), [1], 'or ends right before it');
  t.same(ids([summary(1, 9000, 9), summary(2, 1, 8)]).length, 2, 'counts above 200 show 200');
  t.same(ids([]), []);
});
