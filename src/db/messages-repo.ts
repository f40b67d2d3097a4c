// Writes of conversations, messages and their status history. Status moves are single
// conditional UPDATEs along STATUS_RANK; duplicates are absorbed by UNIQUE keys. Wamids are per user.
import { eq, sql } from 'drizzle-orm';
import type { DB } from './client';
import { eventLogOf } from './events-repo';
import { createListedMessages, type RenderMessage } from './listed-messages';
import { conversations, messages, messageStatuses, orphanStatuses, type MessageRow } from './tables';

/** A status only moves up this ladder; `failed` ranks below `delivered` (several devices). */
export const STATUS_RANK = { received: 0, pending: 0, accepted: 1, sent: 2, failed: 3, delivered: 4, read: 5 } as const;
export type CallbackStatus = 'sent' | 'delivered' | 'read' | 'failed';

export interface NewOutbound {
  userId: number; to: string; type: string; text: string | null;
  payloadJson: string; templateJson?: string | null; createdAt: number;
  mediaJson?: string | null; locationJson?: string | null; replyTo?: string | null;
}
export interface NewInbound {
  userId: number; contactWaId: string; contactName: string | null; wamid: string; type: string; text: string | null;
  payloadJson: string; mediaJson?: string | null; locationJson?: string | null; replyTo?: string | null; createdAt: number;
  /** The network's error on the message itself (e.g. `unsupported`), as `{code, title, details}` JSON. */
  errorJson?: string | null;
}
/** A callback status: the ranked ones move the current status; any other (`played`, `deleted` …) only joins the history. */
export interface StatusEvent { status: CallbackStatus | (string & {}); at: number; errorJson: string | null }
const RANKED = new Set<string>(['sent', 'delivered', 'read', 'failed']);
const isRanked = (status: string): status is CallbackStatus => RANKED.has(status);
/** An outbound message whose send has not stored its outcome. */
export interface PendingOutbound { id: number; userId: number; createdAt: number }

/** `render` keeps each message's listed JSON current: every method that changes a message renders it again. */
export function createMessagesRepo(db: DB, render: RenderMessage) {
  const client = db.$client;
  const listed = createListedMessages(client, render);
  const appendEvent = eventLogOf(client).append;
  const touchConversation = client.prepare<[number, string, string | null, number, number | null], { id: number }>(`
    INSERT INTO conversations (user_id, contact_wa_id, contact_name, last_message_at, last_inbound_at)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (user_id, contact_wa_id) DO UPDATE SET
      contact_name = coalesce(excluded.contact_name, contact_name),
      last_message_at = max(last_message_at, excluded.last_message_at),
      last_inbound_at = CASE WHEN excluded.last_inbound_at IS NULL THEN last_inbound_at
                             ELSE max(coalesce(last_inbound_at, 0), excluded.last_inbound_at) END
    RETURNING id`);
  const outboundIdByWamid = client.prepare<[number, string], { id: number }>(
    "SELECT id FROM messages WHERE user_id = ? AND wamid = ? AND direction = 'outbound'");
  const insertHistory = client.prepare<[number, string, number, string | null]>(
    'INSERT OR IGNORE INTO message_statuses (message_id, status, at, error_json) VALUES (?, ?, ?, ?)');
  // failed stores its error; a later delivered/read clears the current error (the history keeps it).
  const moveStatus = client.prepare<{ id: number; status: string; rank: number; at: number; error: string | null }>(`
    UPDATE messages SET status = @status, status_rank = @rank, status_updated_at = @at,
      error_json = CASE WHEN @status = 'failed' THEN @error WHEN @rank > 3 THEN NULL ELSE error_json END
    WHERE id = @id AND status_rank < @rank`);
  const insertOrphan = client.prepare<[number, string, string, number, string | null, number]>(
    'INSERT OR IGNORE INTO orphan_statuses (user_id, wamid, status, at, error_json, received_at) VALUES (?, ?, ?, ?, ?, ?)');
  const takeOrphans = client.prepare<[number, string], { status: string; at: number; error_json: string | null }>(
    'DELETE FROM orphan_statuses WHERE user_id = ? AND wamid = ? RETURNING status, at, error_json');

  // The webhook's hot path: prepared once; a redelivered (user, wamid) changes nothing.
  const insertInboundRow = client.prepare<{
    userId: number; conversationId: number; type: string; text: string | null; wamid: string; payloadJson: string;
    mediaJson: string | null; locationJson: string | null; replyTo: string | null; errorJson: string | null; createdAt: number;
  }>(`INSERT INTO messages (user_id, conversation_id, direction, type, text, wamid, status, status_rank, payload_json,
      media_json, location_json, reply_to, error_json, created_at)
    VALUES (@userId, @conversationId, 'inbound', @type, @text, @wamid, 'received', 0, @payloadJson,
      @mediaJson, @locationJson, @replyTo, @errorJson, @createdAt)
    ON CONFLICT (user_id, wamid) DO NOTHING`);
  // Inbound media with an id joins the download queue in the message's own write (the worker fetches it later).
  const enqueueMedia = client.prepare<[number, string | null]>(
    "INSERT OR IGNORE INTO media_downloads (message_id) SELECT ? WHERE json_extract(?, '$.id') IS NOT NULL");
  const ownerOf = client.prepare<[number], { userId: number; createdAt: number }>(
    'SELECT user_id AS userId, created_at AS createdAt FROM messages WHERE id = ?');
  // One write: the wamid, the contact's conversation, and `accepted` unless a raced status is already past it.
  const accept = client.prepare<{ id: number; wamid: string; at: number; conversationId: number }>(`
    UPDATE messages SET wamid = @wamid, conversation_id = @conversationId,
      status = CASE WHEN status_rank < ${STATUS_RANK.accepted} THEN 'accepted' ELSE status END,
      status_updated_at = CASE WHEN status_rank < ${STATUS_RANK.accepted} THEN @at ELSE status_updated_at END,
      status_rank = max(status_rank, ${STATUS_RANK.accepted})
    WHERE id = @id`);
  const insertOutboundRow = client.prepare<{
    userId: number; conversationId: number; type: string; text: string | null; to: string; payloadJson: string;
    templateJson: string | null; createdAt: number; mediaJson: string | null; locationJson: string | null; replyTo: string | null;
  }>(`INSERT INTO messages (user_id, conversation_id, direction, type, text, to_number, status, status_rank, payload_json,
      template_json, created_at, media_json, location_json, reply_to)
    VALUES (@userId, @conversationId, 'outbound', @type, @text, @to, 'pending', 0, @payloadJson, @templateJson, @createdAt,
      @mediaJson, @locationJson, @replyTo)`);
  const fail = client.prepare<[string, number, number]>(
    `UPDATE messages SET status = 'failed', status_rank = ${STATUS_RANK.failed}, error_json = ?, status_updated_at = ? WHERE id = ?`);
  // Interrupted sends (SPEC §5 item 6): a bounded id range per statement, so no scan holds the event loop for long.
  const pendingInRange = client.prepare<[number, number], PendingOutbound>(`SELECT id, user_id AS userId, created_at AS createdAt
    FROM messages WHERE id > ? AND id <= ? AND direction = 'outbound' AND status = 'pending' AND wamid IS NULL ORDER BY id`);
  const lastId = client.prepare<[], number>('SELECT coalesce(max(id), 0) FROM messages').pluck();
  // Conditional: a send that stored its answer meanwhile (or any wamid at all) is never touched.
  const interrupt = client.prepare<[string, number, number]>(`UPDATE messages SET status = 'failed', status_rank = ${STATUS_RANK.failed},
    error_json = ?, status_updated_at = ? WHERE id = ? AND direction = 'outbound' AND status = 'pending' AND wamid IS NULL`);
  const conversationId = (userId: number, waId: string, name: string | null, at: number, inboundAt: number | null) =>
    touchConversation.get(userId, waId, name, at, inboundAt)!.id;

  /** Appends to the history (once) and moves the current status if it is ranked and ranks higher; callers refresh the listed JSON once. */
  function applyToMessage(messageId: number, event: StatusEvent): void {
    const recorded = insertHistory.run(messageId, event.status, event.at, event.errorJson).changes > 0;
    const moved = isRanked(event.status)
      && moveStatus.run({ id: messageId, status: event.status, rank: STATUS_RANK[event.status], at: event.at, error: event.errorJson }).changes > 0;
    if (moved || (recorded && event.status === 'failed')) appendEvent('message.status', messageId, event.status);
  }

  return {
    conversationId,

    /** Stores an outbound message as `pending`, in the conversation of the number as typed; its id. */
    insertOutbound(m: NewOutbound): number {
      const id = Number(insertOutboundRow.run({
        userId: m.userId, conversationId: conversationId(m.userId, m.to, null, m.createdAt, null), type: m.type, text: m.text,
        to: m.to, payloadJson: m.payloadJson, templateJson: m.templateJson ?? null, createdAt: m.createdAt,
        mediaJson: m.mediaJson ?? null, locationJson: m.locationJson ?? null, replyTo: m.replyTo ?? null,
      }).lastInsertRowid);
      listed.refresh(id);
      appendEvent('message.sent', id);
      return id;
    },

    /** The network accepted it: record its wamid under the contact's wa_id, then apply this user's statuses that raced ahead (call inside one write). */
    markAccepted(messageId: number, wamid: string, waId: string, at: number): void {
      const owner = ownerOf.get(messageId)!;
      accept.run({ id: messageId, wamid, at, conversationId: conversationId(owner.userId, waId, null, owner.createdAt, null) });
      appendEvent('message.status', messageId, 'accepted');
      for (const orphan of takeOrphans.all(owner.userId, wamid)) applyToMessage(messageId, { status: orphan.status, at: orphan.at, errorJson: orphan.error_json });
      listed.refresh(messageId);
    },

    /** The send failed before the network accepted it (refused, timed out, unreachable). */
    markFailed(messageId: number, errorJson: string, at: number): void {
      fail.run(errorJson, at, messageId);
      listed.refresh(messageId);
      appendEvent('message.status', messageId, 'failed');
    },

    /** A callback status routed to `userId`: applied to that user's outbound message, or kept until its send stores the wamid. */
    applyStatus(userId: number, wamid: string, event: StatusEvent, receivedAt: number): 'applied' | 'orphaned' {
      const message = outboundIdByWamid.get(userId, wamid);
      if (!message) {
        insertOrphan.run(userId, wamid, event.status, event.at, event.errorJson, receivedAt);
        return 'orphaned';
      }
      applyToMessage(message.id, event);
      listed.refresh(message.id);
      return 'applied';
    },

    /** Renders the messages stored without their listed JSON (start-up: older databases, raw inserts). */
    fillListedJson: listed.fillMissing,

    /** Stores an inbound message once per user and wamid; false for a redelivery. */
    insertInbound(m: NewInbound): boolean {
      const conversation = conversationId(m.userId, m.contactWaId, m.contactName, m.createdAt, m.createdAt);
      const inserted = insertInboundRow.run({
        userId: m.userId, conversationId: conversation, type: m.type, text: m.text, wamid: m.wamid, payloadJson: m.payloadJson,
        mediaJson: m.mediaJson ?? null, locationJson: m.locationJson ?? null, replyTo: m.replyTo ?? null,
        errorJson: m.errorJson ?? null, createdAt: m.createdAt,
      });
      if (inserted.changes === 0) return false;
      const id = Number(inserted.lastInsertRowid);
      if (m.mediaJson) enqueueMedia.run(id, m.mediaJson);
      listed.refresh(id);
      appendEvent('message.received', id);
      return true;
    },

    /** Outbound messages still `pending` without a wamid with `afterId < id <= upToId`, oldest first (a read). */
    pendingOutboundIn: (afterId: number, upToId: number): PendingOutbound[] => pendingInRange.all(afterId, upToId),
    /** The highest message id so far (0 when none). */
    lastId: (): number => lastId.get() ?? 0,
    /** `failed` with `errorJson` if it is still pending without a wamid (call inside a write); whether it moved. */
    markInterrupted(messageId: number, errorJson: string, at: number): boolean {
      const moved = interrupt.run(errorJson, at, messageId).changes > 0;
      if (moved) listed.refresh(messageId);
      if (moved) appendEvent('message.status', messageId, 'failed');
      return moved;
    },

    findById: (id: number): MessageRow | undefined => db.select().from(messages).where(eq(messages.id, id)).get(),
    history: (messageId: number) => db.select().from(messageStatuses).where(eq(messageStatuses.messageId, messageId))
      .orderBy(messageStatuses.at, messageStatuses.id).all(),
    orphanCount: (): number => db.select({ n: sql<number>`count(*)` }).from(orphanStatuses).get()?.n ?? 0,
    conversationOf: (messageId: number) => db.select().from(conversations)
      .innerJoin(messages, eq(messages.conversationId, conversations.id)).where(eq(messages.id, messageId)).get()?.conversations,
  };
}
export type MessagesRepo = ReturnType<typeof createMessagesRepo>;
