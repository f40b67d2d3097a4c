// Read side of conversations: the page of conversations matching a query, their latest messages
// and status histories — every step an index seek, never a scan of a user's whole history.
import type { DB } from './client';

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

export interface ConversationSummary {
  id: number; contactWaId: string; contactName: string | null; lastInboundAt: number | null;
  /** Time of the last matching message. */
  lastAt: number;
  /** Number of matching messages. */
  count: number;
}

export type StoredStatus = [status: string, at: number, errorJson: string | null];
/** A message as read for display: a tuple, because rows leave SQLite as JSON arrays (see below). */
export type StoredMessage = [
  id: number, wamid: string | null, direction: 'inbound' | 'outbound', type: string, text: string | null, toNumber: string | null,
  status: string, errorJson: string | null, templateJson: string | null, mediaJson: string | null, locationJson: string | null,
  replyTo: string | null, createdAt: number, statusUpdatedAt: number | null,
  /** Outbound: the status history, oldest first; null for inbound messages. */
  statuses: StoredStatus[] | null,
];

/** The latest messages of a conversation that are shown (SPEC §7). */
export const MESSAGES_PER_CONVERSATION = 200;

// A conversation's messages, with their status histories, leave SQLite as one JSON array of arrays:
// JSON.parse builds them several times faster than reading up to 200 rows one column at a time.
// Same order as StoredMessage.
const COLUMNS = `id, wamid, direction, type, text, to_number, status, error_json, template_json, media_json,
  location_json, reply_to, created_at, status_updated_at`;
const MESSAGE_ARRAY = `json_array(${COLUMNS}, CASE WHEN direction = 'outbound' THEN json((
    SELECT json_group_array(json_array(s.status, s.at, s.error_json) ORDER BY s.at, s.id)
    FROM message_statuses s WHERE s.message_id = m.id)) END)`;
const oldestFirst = (a: StoredMessage, b: StoredMessage) => a[12] - b[12] || a[0] - b[0];

interface Candidate { id: number; contactWaId: string; contactName: string | null; lastInboundAt: number | null; lastMessageAt: number }

/** Newer first; equal times by the higher conversation id. */
const newerFirst = (a: { lastAt: number; id: number }, b: { lastAt: number; id: number }) => b.lastAt - a.lastAt || b.id - a.id;

export function createConversationsRepo(db: DB) {
  const client = db.$client;
  const candidateSql = `SELECT id, contact_wa_id AS contactWaId, contact_name AS contactName, last_inbound_at AS lastInboundAt,
    last_message_at AS lastMessageAt FROM conversations WHERE user_id = @userId AND last_message_at >= @from`;
  // conversations.last_message_at is the newest message ever stored in it: an upper bound of its last matching one.
  const candidates = client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} ORDER BY last_message_at DESC, id DESC`);
  const candidateOfContact = client.prepare<Record<string, unknown>, Candidate>(`${candidateSql} AND contact_wa_id = @contact`);

  // Two variants of each message statement, so that each one has an index matching it exactly. Without
  // statistics the planner would read a type's latest 200 through (conversation, created_at) and skip other types.
  const messageStatements = (typed: boolean) => {
    const table = typed ? 'messages INDEXED BY messages_conversation_type_created' : 'messages';
    const where = `conversation_id = @conversationId ${typed ? 'AND type = @type' : ''} AND created_at >= @from AND created_at < @to`;
    return {
      lastAt: client.prepare<Record<string, unknown>, number>(
        `SELECT created_at FROM ${table} WHERE ${where} ORDER BY created_at DESC LIMIT 1`).pluck(),
      count: client.prepare<Record<string, unknown>, number>(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck(),
      latest: client.prepare<Record<string, unknown>, string>(`SELECT json_group_array(${MESSAGE_ARRAY})
        FROM (SELECT ${COLUMNS} FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${MESSAGES_PER_CONVERSATION}) AS m`).pluck(),
    };
  };
  const untyped = messageStatements(false);
  const typed = messageStatements(true);
  const statements = (q: MessageQuery) => (q.type === undefined ? untyped : typed);
  const params = (q: MessageQuery, conversationId: number) => ({ conversationId, type: q.type, from: q.from, to: q.to });

  return {
    /**
     * The page of conversations with a matching message, newest last matching message first.
     * Walks conversations by their newest message and stops as soon as no later one can enter the page.
     */
    page(q: PageQuery): ConversationSummary[] {
      const s = statements(q);
      const rows = q.contact === undefined ? candidates.iterate({ userId: q.userId, from: q.from })
        : candidateOfContact.iterate({ userId: q.userId, from: q.from, contact: q.contact });
      const before = q.before ?? Infinity;
      const picked: Omit<ConversationSummary, 'count'>[] = [];
      for (const c of rows) {
        const bound = Math.min(c.lastMessageAt, q.to - 1, before - 1);
        if (picked.length === q.limit && bound < picked[picked.length - 1]!.lastAt) break;
        const lastAt = s.lastAt.get(params(q, c.id));
        if (lastAt === undefined || lastAt >= before) continue;
        const found = { id: c.id, contactWaId: c.contactWaId, contactName: c.contactName, lastInboundAt: c.lastInboundAt, lastAt };
        const at = picked.findIndex((p) => newerFirst(found, p) < 0);
        picked.splice(at < 0 ? picked.length : at, 0, found);
        if (picked.length > q.limit) picked.pop();
      }
      return picked.map((p) => ({ ...p, count: s.count.get(params(q, p.id))! }));
    },

    /** The latest matching messages of a conversation, oldest first. */
    latestMessages(q: MessageQuery, conversationId: number): StoredMessage[] {
      const newestFirst = JSON.parse(statements(q).latest.get(params(q, conversationId))!) as StoredMessage[];
      // The aggregate keeps the subquery's order in practice, not by contract: sorting the reversed (sorted) array is linear.
      return newestFirst.reverse().sort(oldestFirst);
    },
  };
}
export type ConversationsRepo = ReturnType<typeof createConversationsRepo>;
