// Read side of conversations: the page of conversations matching a query, and their latest messages as the
// JSON each write stored — every step an index seek, never a scan of a user's whole history.
import type { DB } from './client';
import { STORED_MESSAGE, type RenderMessage, type StoredMessage } from './listed-messages';
import { IN_TYPE_INDEX } from './tables';

/** Which messages match: the user's, optionally of one type or contact, created in [from, to). */
export interface MessageQuery {
  userId: number;
  type?: string | undefined;
  contact?: string | undefined;
  from: number;
  to: number;
}
export interface PageQuery extends MessageQuery {
  /** Only conversations whose last matching message is older than this (ms). */
  before?: number | undefined;
  limit: number;
}

/** The contact of a conversation as the listing shows it. */
export interface ContactSummary {
  contactId: number; contactWaId: string | null; contactBsuid: string | null; contactParentBsuid: string | null;
  contactUsername: string | null; contactName: string | null; contactAliasesJson: string;
}

export interface ConversationSummary extends ContactSummary {
  id: number; lastInboundAt: number | null;
  /** Time of the last matching message. */
  lastAt: number;
  /** Number of matching messages. */
  count: number;
}

/** The latest messages of a conversation that are shown (SPEC §7). */
export const MESSAGES_PER_CONVERSATION = 200;

const EMPTY = Buffer.alloc(0);

interface Candidate extends ContactSummary { id: number; lastInboundAt: number | null; lastMessageAt: number }

/** The `contact` filter: phone digits, a BSUID or `id:<contact id>` -> the column it matches. */
function contactFilter(contact: string): { column: 'wa_id' | 'bsuid' | 'id'; value: string | number } {
  if (contact.startsWith('id:')) return { column: 'id', value: Number(contact.slice(3)) };
  return /^[0-9]+$/.test(contact) ? { column: 'wa_id', value: contact } : { column: 'bsuid', value: contact };
}

/** Newer first; equal times by the higher conversation id. */
const newerFirst = (a: { lastAt: number; id: number }, b: { lastAt: number; id: number }) => b.lastAt - a.lastAt || b.id - a.id;

/**
 * Whether candidate `c` (or any after it: candidates come by newest message, then id, both descending) could still
 * enter a full page whose last entry is `last`, its last matching message being at most `bound`. A tie on the time
 * is decided by the id: when the bound is the candidate's own newest message, the candidates after it with that same
 * time all have lower ids. Busy numbers tie often (the network's timestamps are in seconds): without this, a page
 * read every conversation that had a message in the page's last second.
 */
function canEnter(c: { id: number; lastMessageAt: number }, bound: number, last: { lastAt: number; id: number }): boolean {
  if (bound !== last.lastAt) return bound > last.lastAt;
  return bound !== c.lastMessageAt || c.id > last.id;
}

/** `render` shows a message stored without its listed JSON (the same renderer the writes use). */
export function createConversationsRepo(db: DB, render: RenderMessage) {
  const client = db.$client;
  // A conversation written without a contact (a raw insert) shows what it was keyed and named by.
  const candidateSql = `SELECT v.id, v.last_inbound_at AS lastInboundAt, v.last_message_at AS lastMessageAt, coalesce(c.id, v.id) AS contactId,
    CASE WHEN c.id IS NULL THEN v.contact_wa_id ELSE c.wa_id END AS contactWaId, c.bsuid AS contactBsuid,
    c.parent_bsuid AS contactParentBsuid, c.username AS contactUsername,
    CASE WHEN c.id IS NULL THEN v.contact_name ELSE c.name END AS contactName, coalesce(c.aliases_json, '[]') AS contactAliasesJson
    FROM conversations v LEFT JOIN contacts c ON c.id = v.contact_id WHERE v.user_id = @userId AND v.last_message_at >= @from`;
  // conversations.last_message_at is the newest message ever stored in it: an upper bound of its last matching one.
  const candidates = client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} ORDER BY v.last_message_at DESC, v.id DESC`);
  // One contact: found through its own unique index (user, wa_id / bsuid) or its id, then its one conversation.
  const candidateOfContact = {
    wa_id: client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} AND c.user_id = @userId AND c.wa_id = @contact`),
    bsuid: client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} AND c.user_id = @userId AND c.bsuid = @contact`),
    id: client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} AND c.id = @contact`),
  };

  // Three variants of each message statement, so that each one has an index matching it exactly: all types, and texts,
  // along (conversation, created_at, id, type), texts by the type in the index; any other type along its own range of
  // (conversation, type, created_at), an index that leaves texts out (its condition must be in the statement to use it).
  // Without statistics the planner would read a type's latest 200 through (conversation, created_at) and skip other types.
  const messageStatements = (typed: 'all' | 'text' | 'other') => {
    const table = { all: 'messages', text: 'messages INDEXED BY messages_conversation_created', other: 'messages INDEXED BY messages_conversation_type_created' }[typed];
    const filter = { all: '', text: "AND type = 'text'", other: `AND type = @type AND ${IN_TYPE_INDEX}` }[typed];
    const where = `conversation_id = @conversationId ${filter} AND created_at >= @from AND created_at < @to`;
    // The latest 200, oldest first, straight along the index: skip all but the last 200 of the `count` the page
    // found (the caller reads both in one snapshot).
    const latest = (columns: string) => `SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY created_at, id
      LIMIT ${MESSAGES_PER_CONVERSATION} OFFSET @skip`;
    return {
      lastAt: client.prepare<Record<string, unknown>, number>(
        `SELECT created_at FROM ${table} WHERE ${where} ORDER BY created_at DESC LIMIT 1`).pluck(),
      count: client.prepare<Record<string, unknown>, number>(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck(),
      // group_concat takes the rows in the order the subquery yields them (its LIMIT keeps it a separate, ordered
      // step); an ORDER BY inside the aggregate would sort them again. The tests pin the order.
      // As UTF-8 bytes (a BLOB): the answer goes out as bytes, so the text is never decoded into a JS string.
      joined: client.prepare<Record<string, unknown>, { bytes: Buffer | null; missing: number }>(
        `SELECT CAST(group_concat(listed_json, ',') AS BLOB) AS bytes, count(*) - count(listed_json) AS missing FROM (${latest('listed_json')})`),
      rows: client.prepare<Record<string, unknown>, { listed: string | null; stored: string | null }>(
        `SELECT m.listed_json AS listed, CASE WHEN m.listed_json IS NULL THEN ${STORED_MESSAGE} END AS stored
         FROM (${latest('*')}) AS m ORDER BY m.created_at, m.id`),
    };
  };
  const untyped = messageStatements('all');
  const texts = messageStatements('text');
  const typed = messageStatements('other');
  const statements = (q: MessageQuery) => (q.type === undefined ? untyped : q.type === 'text' ? texts : typed);
  const params = (q: MessageQuery, conversationId: number) => ({ conversationId, type: q.type, from: q.from, to: q.to });
  const latestParams = (q: MessageQuery, s: Pick<ConversationSummary, 'id' | 'count'>) =>
    ({ ...params(q, s.id), skip: Math.max(0, s.count - MESSAGES_PER_CONVERSATION) });

  // One message, and a conversation's whole history paged by message id (ids only grow: a late message with an old
  // timestamp still comes after every earlier page).
  const messageColumns = `m.id, m.listed_json AS listed, CASE WHEN m.listed_json IS NULL THEN ${STORED_MESSAGE} END AS stored`;
  const oneMessage = client.prepare<[number], { id: number; userId: number; listed: string | null; stored: string | null }>(
    `SELECT m.user_id AS userId, ${messageColumns} FROM messages m WHERE m.id = ?`);
  const conversationOfContact = client.prepare<[number, number], number>('SELECT id FROM conversations WHERE user_id = ? AND contact_id = ?').pluck();
  const newestBefore = client.prepare<[number, number, number], { id: number; listed: string | null; stored: string | null }>(
    `SELECT ${messageColumns} FROM messages m WHERE m.conversation_id = ? AND m.id < ? ORDER BY m.id DESC LIMIT ?`);
  const oldestAfter = client.prepare<[number, number, number], { id: number; listed: string | null; stored: string | null }>(
    `SELECT ${messageColumns} FROM messages m WHERE m.conversation_id = ? AND m.id > ? ORDER BY m.id LIMIT ?`);
  const anyBefore = client.prepare<[number, number], number>('SELECT 1 FROM messages WHERE conversation_id = ? AND id < ? LIMIT 1').pluck();
  const anyAfter = client.prepare<[number, number], number>('SELECT 1 FROM messages WHERE conversation_id = ? AND id > ? LIMIT 1').pluck();
  const listedOf = (r: { listed: string | null; stored: string | null }) => r.listed ?? render(JSON.parse(r.stored!) as StoredMessage);

  return {
    /** One message as listed (JSON text) with its owner; undefined when no message has this id. */
    messageJson(id: number): { userId: number; json: string } | undefined {
      const row = oneMessage.get(id);
      return row === undefined ? undefined : { userId: row.userId, json: listedOf(row) };
    },

    /**
     * A page of the messages of the user's conversation with contact `contactId`, oldest first, by message id: after
     * `afterId` (the oldest `limit` of those), else before `beforeId` (the newest `limit` of those; no bound: the latest).
     * The cursors name the page's first/last id when older/newer messages exist (null: none that way).
     */
    conversationMessages(userId: number, contactId: number, page: { beforeId?: number | undefined; afterId?: number | undefined; limit: number }):
      { messages: string[]; nextBeforeId: number | null; nextAfterId: number | null } {
      const conversationId = conversationOfContact.get(userId, contactId);
      if (conversationId === undefined) return { messages: [], nextBeforeId: null, nextAfterId: null };
      const rows = page.afterId !== undefined ? oldestAfter.all(conversationId, page.afterId, page.limit)
        : newestBefore.all(conversationId, page.beforeId ?? Number.MAX_SAFE_INTEGER, page.limit).reverse();
      if (rows.length === 0) return { messages: [], nextBeforeId: null, nextAfterId: null };
      const first = rows[0]!.id;
      const last = rows.at(-1)!.id;
      return {
        messages: rows.map(listedOf),
        nextBeforeId: anyBefore.get(conversationId, first) === undefined ? null : first,
        nextAfterId: anyAfter.get(conversationId, last) === undefined ? null : last,
      };
    },

    /**
     * The page of conversations with a matching message, newest last matching message first.
     * Walks conversations by their newest message and stops as soon as no later one can enter the page.
     */
    page(q: PageQuery): ConversationSummary[] {
      const s = statements(q);
      const filter = q.contact === undefined ? undefined : contactFilter(q.contact);
      const rows = filter === undefined ? candidates.iterate({ userId: q.userId, from: q.from })
        : candidateOfContact[filter.column].iterate({ userId: q.userId, from: q.from, contact: filter.value });
      const before = q.before ?? Infinity;
      const picked: Omit<ConversationSummary, 'count'>[] = [];
      for (const c of rows) {
        const bound = Math.min(c.lastMessageAt, q.to - 1, before - 1);
        if (picked.length === q.limit && !canEnter(c, bound, picked[picked.length - 1]!)) break;
        const lastAt = s.lastAt.get(params(q, c.id));
        if (lastAt === undefined || lastAt >= before) continue;
        const { lastMessageAt: _last, ...candidate } = c;
        const found = { ...candidate, lastAt };
        const at = picked.findIndex((p) => newerFirst(found, p) < 0);
        picked.splice(at < 0 ? picked.length : at, 0, found);
        if (picked.length > q.limit) picked.pop();
      }
      return picked.map((p) => ({ ...p, count: s.count.get(params(q, p.id))! }));
    },

    /**
     * The latest matching messages of a conversation the page found, oldest first, as comma-separated JSON objects in
     * UTF-8. Read in the same snapshot as the page (a read transaction, or synchronously on one connection).
     */
    latestMessagesJson(q: MessageQuery, summary: Pick<ConversationSummary, 'id' | 'count'>): Buffer {
      const s = statements(q);
      const { bytes, missing } = s.joined.get(latestParams(q, summary))!;
      if (missing === 0) return bytes ?? EMPTY;
      // Some rows were stored without their listed JSON (not yet filled): render those here, store nothing.
      const text = s.rows.all(latestParams(q, summary)).map((r) => r.listed ?? render(JSON.parse(r.stored!) as StoredMessage)).join(',');
      return Buffer.from(text);
    },
  };
}
export type ConversationsRepo = ReturnType<typeof createConversationsRepo>;
