// Writes of conversations, messages and their status history. Status moves are single
// conditional UPDATEs along STATUS_RANK; duplicates are absorbed by UNIQUE keys (a status history by its own check). Wamids are per user.
import { eq, sql } from 'drizzle-orm';
import type { DB } from './client';
import { eventLogOf } from './events-repo';
import { createListedMessages, type MessageRenderer, type StatusColumns, type StoredStatus } from './listed-messages';
import { historyEntries, withEntry, type HistoryEntry } from './status-history';
import { messages, orphanStatuses, type MessageRow } from './tables';

/** A status only moves up this ladder; `failed` ranks below `delivered` (several devices). */
export const STATUS_RANK = { received: 0, pending: 0, accepted: 1, sent: 2, failed: 3, delivered: 4, read: 5 } as const;
export type CallbackStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** The contact a message belongs to, as contact resolution found it; `key` is what older releases keyed a conversation by. */
export interface ContactRef { contactId: number; key: string }

export interface NewOutbound {
  /** Default: the contact of the number `to` (created when new). */
  userId: number; contact?: ContactRef; to: string; type: string; text: string | null;
  payloadJson: string; templateJson?: string | null; createdAt: number;
  mediaJson?: string | null; locationJson?: string | null; replyTo?: string | null;
}
/** Where a queued or scheduled message waits: due from `sendAt`, failed EXPIRED after `expiresAt`; a reply (before
 * bulk) when its contact wrote after `replyWindowStart`. */
export interface QueuePlacement { status: 'queued' | 'scheduled'; sendAt: number; expiresAt: number | null; replyWindowStart: number }
export interface NewInbound {
  userId: number; wamid: string; type: string; text: string | null;
  /** The contact as resolution found it; or, for callers that only know a number, `contactWaId` (and its name). */
  contact?: ContactRef; contactWaId?: string; contactName?: string | null;
  payloadJson: string; mediaJson?: string | null; locationJson?: string | null; replyTo?: string | null; createdAt: number;
  /** The network's error on the message itself (e.g. `unsupported`), as `{code, title, details}` JSON. */
  errorJson?: string | null;
}
/** A message the user sent elsewhere than through the gateway (the network's agent, the phone app): listed, never charged. */
export interface NewEcho {
  userId: number; contact: ContactRef; wamid: string; type: string; text: string | null; to: string | null;
  origin: 'agent' | 'business_app'; payloadJson: string; createdAt: number;
  mediaJson?: string | null; locationJson?: string | null;
}
/** A callback status: the ranked ones move the current status; any other (`played`, `deleted` …) only joins the history. */
export interface StatusEvent { status: CallbackStatus | (string & {}); at: number; errorJson: string | null; pricingJson?: string | null }
const RANKED = new Set<string>(['sent', 'delivered', 'read', 'failed']);
const isRanked = (status: string): status is CallbackStatus => RANKED.has(status);
export interface ConversationOf {
  id: number; userId: number; contactId: number | null; contactWaId: string | null; contactBsuid: string | null;
  contactParentBsuid: string | null; contactUsername: string | null; contactName: string | null; contactAliasesJson: string | null;
  lastMessageAt: number; lastInboundAt: number | null;
}
/** An outbound message's columns that a status callback changes, and its listed JSON (null: render it afresh). */
interface StatusRow extends StatusColumns { id: number; userId: number; rank: number; listed: string | null; statuses: string | null }
/** An outbound message whose send has not stored its outcome. */
export interface PendingOutbound { id: number; userId: number; createdAt: number }

/** `render` keeps each message's listed JSON current: every method that changes a message renders it again. */
export function createMessagesRepo(db: DB, renderer: MessageRenderer) {
  const client = db.$client;
  const listed = createListedMessages(client, renderer);
  const appendEvent = eventLogOf(client).append;
  const touchConversation = client.prepare<[number, number, string, number, number | null]>(`
    INSERT INTO conversations (user_id, contact_id, contact_wa_id, last_message_at, last_inbound_at)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (contact_id) DO UPDATE SET
      last_message_at = max(last_message_at, excluded.last_message_at),
      last_inbound_at = CASE WHEN excluded.last_inbound_at IS NULL THEN last_inbound_at
                             ELSE max(coalesce(last_inbound_at, 0), excluded.last_inbound_at) END`);
  // Hot statements read their row back rather than RETURNING it (whose rows go through a temporary table: µs more each).
  const conversationOfContact = client.prepare<[number], number>('SELECT id FROM conversations WHERE contact_id = ?').pluck();
  // An outbound message as a status callback changes it: read once, written back in one UPDATE with its patched listed JSON.
  const STATUS_ROW = `id, user_id AS userId, status, status_rank AS rank, status_updated_at AS statusUpdatedAt, error_json AS errorJson,
    pricing_json AS pricingJson, listed_json AS listed, statuses_json AS statuses`;
  const statusRowByWamid = client.prepare<[number, string], StatusRow>(
    `SELECT ${STATUS_ROW} FROM messages WHERE user_id = ? AND wamid = ? AND direction = 'outbound'`);
  const statusRowById = client.prepare<[number], StatusRow>(`SELECT ${STATUS_ROW} FROM messages WHERE id = ?`);
  const storeStatus = client.prepare<[string, number, number | null, string | null, string | null, string | null, string | null, number]>(`UPDATE messages
    SET status = ?, status_rank = ?, status_updated_at = ?, error_json = ?, pricing_json = ?, statuses_json = ?, listed_json = ? WHERE id = ?`);
  const statusesOf = client.prepare<[number], string | null>('SELECT statuses_json FROM messages WHERE id = ?').pluck();
  const insertOrphan = client.prepare<[number, string, string, number, string | null, number]>(
    'INSERT OR IGNORE INTO orphan_statuses (user_id, wamid, status, at, error_json, received_at) VALUES (?, ?, ?, ?, ?, ?)');
  // Read first: almost every send has none, and then nothing is deleted.
  const orphansOf = client.prepare<[number, string], { status: string; at: number; error_json: string | null }>(
    'SELECT status, at, error_json FROM orphan_statuses WHERE user_id = ? AND wamid = ? ORDER BY id');
  const dropOrphans = client.prepare<[number, string]>('DELETE FROM orphan_statuses WHERE user_id = ? AND wamid = ?');

  // The webhook's hot path: prepared once; a redelivered (user, wamid) changes nothing.
  // An inbound message is stored with its listed JSON in the one INSERT: its id is known before (AUTOINCREMENT hands out
  // the sequence's next number, and this runs inside the single writer's transaction).
  const nextMessageId = client.prepare<[], number>(
    "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0) + 1").pluck();
  const insertInboundRow = client.prepare<{
    id: number; userId: number; conversationId: number; type: string; text: string | null; wamid: string; payloadJson: string;
    mediaJson: string | null; locationJson: string | null; replyTo: string | null; errorJson: string | null; createdAt: number; listed: string | null;
  }>(`INSERT INTO messages (id, user_id, conversation_id, direction, type, text, wamid, status, status_rank, payload_json,
      media_json, location_json, reply_to, error_json, created_at, listed_json)
    VALUES (@id, @userId, @conversationId, 'inbound', @type, @text, @wamid, 'received', 0, @payloadJson,
      @mediaJson, @locationJson, @replyTo, @errorJson, @createdAt, @listed)
    ON CONFLICT (user_id, wamid) DO NOTHING`);
  // Media with an id joins the download queue in the message's own write (the worker fetches it later): inbound when
  // stored, outbound (an upload's id) when the network accepted it.
  const enqueueMedia = client.prepare<[number, string | null]>(
    "INSERT OR IGNORE INTO media_downloads (message_id) SELECT ? WHERE json_extract(?, '$.id') IS NOT NULL");
  // markAccepted's one read: the owner, the conversation's contact, and what the acceptance patches.
  const ownerOf = client.prepare<[number], {
    userId: number; createdAt: number; mediaJson: string | null; conversationId: number; contactId: number | null } & Omit<StatusRow, 'id' | 'userId'>>(
    `SELECT m.user_id AS userId, m.created_at AS createdAt, m.media_json AS mediaJson, m.conversation_id AS conversationId,
      v.contact_id AS contactId, m.status, m.status_rank AS rank, m.status_updated_at AS statusUpdatedAt, m.error_json AS errorJson,
      m.pricing_json AS pricingJson, m.listed_json AS listed FROM messages m JOIN conversations v ON v.id = m.conversation_id WHERE m.id = ?`);
  // One write: the wamid, `accepted` unless a raced status is already past it, the listed JSON, and the conversation of
  // the contact the network answered when that is another one. conversation_id is set only then: SQLite rewrites the
  // entries of every index holding a column an UPDATE sets, even to the same value (three indexes: some 50 µs a send).
  const ACCEPTED = 'status = ?, status_updated_at = ?, status_rank = max(status_rank, ?), listed_json = ? WHERE id = ?';
  const accept = client.prepare<[string, string, number | null, number, string | null, number]>(`UPDATE messages SET wamid = ?, ${ACCEPTED}`);
  const acceptMoved = client.prepare<[string, number, string, number | null, number, string | null, number]>(
    `UPDATE messages SET wamid = ?, conversation_id = ?, ${ACCEPTED}`);
  // Stored with its listed JSON, as an inbound message is (its id from the sequence, inside the writer's transaction);
  // a queued one with its place in the queue, its priority from its conversation (0: the contact wrote after the window start).
  const insertOutboundRow = client.prepare<{
    id: number; userId: number; conversationId: number; type: string; text: string | null; to: string; payloadJson: string;
    templateJson: string | null; createdAt: number; mediaJson: string | null; locationJson: string | null; replyTo: string | null; listed: string | null;
    status: string; sendAt: number | null; expiresAt: number | null; windowStart: number | null;
  }>(`INSERT INTO messages (id, user_id, conversation_id, direction, type, text, to_number, status, status_rank, payload_json,
      template_json, created_at, media_json, location_json, reply_to, listed_json, send_at, expires_at, priority)
    VALUES (@id, @userId, @conversationId, 'outbound', @type, @text, @to, @status, 0, @payloadJson, @templateJson, @createdAt,
      @mediaJson, @locationJson, @replyTo, @listed, @sendAt, @expiresAt, CASE WHEN @windowStart IS NOT NULL
        THEN coalesce((SELECT last_inbound_at FROM conversations WHERE id = @conversationId), 0) <= @windowStart END)`);
  const fail = client.prepare<[string, number, number]>(
    `UPDATE messages SET status = 'failed', status_rank = ${STATUS_RANK.failed}, error_json = ?, status_updated_at = ? WHERE id = ?`);
  // Interrupted sends (SPEC §5 item 6): a bounded id range per statement, so no scan holds the event loop for long.
  const pendingInRange = client.prepare<[number, number], PendingOutbound>(`SELECT id, user_id AS userId, created_at AS createdAt
    FROM messages WHERE id > ? AND id <= ? AND direction = 'outbound' AND status = 'pending' AND wamid IS NULL ORDER BY id`);
  const lastId = client.prepare<[], number>('SELECT coalesce(max(id), 0) FROM messages').pluck();
  // Conditional: a send that stored its answer meanwhile (or any wamid at all) is never touched.
  const interrupt = client.prepare<[string, number, number]>(`UPDATE messages SET status = 'failed', status_rank = ${STATUS_RANK.failed},
    error_json = ?, status_updated_at = ? WHERE id = ? AND direction = 'outbound' AND status = 'pending' AND wamid IS NULL`);
  // The contact of a bare number (seeds, older callers): found or created through its unique index.
  const contactOfWaId = client.prepare<[number, string, string | null, number, number], { id: number }>(`
    INSERT INTO contacts (user_id, wa_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (user_id, wa_id) WHERE wa_id IS NOT NULL DO UPDATE SET name = coalesce(excluded.name, name) RETURNING id`);
  const refOf = (userId: number, contact: ContactRef | string, at: number, name: string | null = null): ContactRef =>
    typeof contact === 'string' ? { contactId: contactOfWaId.get(userId, contact, name, at, at)!.id, key: contact } : contact;
  const conversationId = (userId: number, contact: ContactRef | string, at: number, inboundAt: number | null) => {
    const ref = refOf(userId, contact, at);
    touchConversation.run(userId, ref.contactId, ref.key, at, inboundAt);
    return conversationOfContact.get(ref.contactId)!;
  };
  const insertEchoRow = client.prepare<{
    userId: number; conversationId: number; type: string; text: string | null; to: string | null; wamid: string; origin: string;
    payloadJson: string; mediaJson: string | null; locationJson: string | null; createdAt: number;
  }>(`INSERT INTO messages (user_id, conversation_id, direction, type, text, to_number, wamid, status, status_rank, payload_json,
      media_json, location_json, created_at, status_updated_at, origin)
    VALUES (@userId, @conversationId, 'outbound', @type, @text, @to, @wamid, 'sent', ${STATUS_RANK.sent}, @payloadJson,
      @mediaJson, @locationJson, @createdAt, @createdAt, @origin)
    ON CONFLICT (user_id, wamid) DO NOTHING`);
  const messageByWamid = client.prepare<[number, string], { id: number; text: string | null }>(
    'SELECT id, text FROM messages WHERE user_id = ? AND wamid = ?');
  // An edit: the new text, the earlier one appended to edits_json (the same edit twice changes nothing).
  const edit = client.prepare<{ id: number; text: string | null; at: number }>(`
    UPDATE messages SET text = @text, edited_at = @at,
      edits_json = json_insert(coalesce(edits_json, '[]'), '$[#]', json_object('text', text, 'at', coalesce(edited_at, created_at)))
    WHERE id = @id AND (edited_at IS NULL OR edited_at < @at)`);
  const conversationOf = client.prepare<[number], ConversationOf>(`SELECT v.id, v.user_id AS userId, v.contact_id AS contactId,
      CASE WHEN c.id IS NULL THEN v.contact_wa_id ELSE c.wa_id END AS contactWaId, c.bsuid AS contactBsuid,
      c.parent_bsuid AS contactParentBsuid, c.username AS contactUsername, coalesce(c.name, v.contact_name) AS contactName,
      c.aliases_json AS contactAliasesJson, v.last_message_at AS lastMessageAt, v.last_inbound_at AS lastInboundAt
    FROM messages m JOIN conversations v ON v.id = m.conversation_id LEFT JOIN contacts c ON c.id = v.contact_id WHERE m.id = ?`);
  // Prepared once: building the query per call cost more than running it (a batch reads back each message it queues).
  const byId = db.select().from(messages).where(eq(messages.id, sql.placeholder('id'))).prepare();
  const revoke = client.prepare<[number]>('UPDATE messages SET revoked = 1 WHERE id = ? AND revoked = 0');

  /**
   * Appends to the history (once); moves the current status if it is ranked and ranks higher (failed stores its error,
   * a later delivered/read clears the current one: the history keeps it); keeps the first pricing that came. Then the
   * row and its listed JSON, patched, in one write.
   */
  function applyToMessage(row: StatusRow, event: StatusEvent): void {
    const pricingJson = event.pricingJson ?? null;
    const entry: StoredStatus = [event.status, event.at, event.errorJson, pricingJson];
    const statuses = withEntry(row.statuses, entry);
    const recorded = statuses !== undefined;
    const rank = isRanked(event.status) ? STATUS_RANK[event.status] : -1;
    const moved = rank > row.rank;
    const priced = pricingJson !== null && row.pricingJson === null;
    if (!recorded && !moved && !priced) return;
    const next: StatusRow = { ...row, pricingJson: row.pricingJson ?? pricingJson };
    if (moved) {
      next.status = event.status;
      next.rank = rank;
      next.statusUpdatedAt = event.at;
      next.errorJson = event.status === 'failed' ? event.errorJson : rank > STATUS_RANK.failed ? null : row.errorJson;
    }
    next.listed = listed.patchedWithStatus(row.listed, next, recorded ? entry : undefined);
    storeStatus.run(next.status, next.rank, next.statusUpdatedAt, next.errorJson, next.pricingJson, statuses ?? row.statuses, next.listed, next.id);
    if (next.listed === null) listed.refresh(row.id);
    if (moved || (recorded && event.status === 'failed')) appendEvent('message.status', row.id, event.status, row.userId);
  }

  return {
    conversationId,

    /** Stores an outbound message as `pending` (or, `queued`, in its place in the send queue), in the conversation of the
     * recipient as given; its id. Its message.sent event records whether it was queued or scheduled. */
    insertOutbound(m: NewOutbound, queued?: QueuePlacement): number {
      const row = {
        id: nextMessageId.get()!, userId: m.userId, conversationId: conversationId(m.userId, m.contact ?? m.to, m.createdAt, null), type: m.type,
        text: m.text, to: m.to, payloadJson: m.payloadJson, templateJson: m.templateJson ?? null, createdAt: m.createdAt,
        mediaJson: m.mediaJson ?? null, locationJson: m.locationJson ?? null, replyTo: m.replyTo ?? null,
      };
      // As STORED_MESSAGE reads a new pending row back (test/listed-json.test.ts holds the two equal).
      const status = queued?.status ?? 'pending';
      const listedJson = listed.renderOrNull([row.id, null, 'outbound', row.type, row.text, row.to, status, null, row.templateJson,
        row.mediaJson, row.locationJson, row.replyTo, row.createdAt, null, [], null, null, null, null, 0, null]);
      const id = Number(insertOutboundRow.run({
        ...row, listed: listedJson, status, sendAt: queued?.sendAt ?? null, expiresAt: queued?.expiresAt ?? null, windowStart: queued?.replyWindowStart ?? null,
      }).lastInsertRowid);
      if (listedJson === null) listed.refresh(id);
      appendEvent('message.sent', id, queued?.status ?? null, m.userId);
      return id;
    },

    /** The network accepted it: record its wamid in the contact the network answered, then apply this user's statuses that raced ahead (call inside one write). */
    markAccepted(messageId: number, wamid: string, contact: ContactRef | string, at: number): void {
      const owner = ownerOf.get(messageId)!;
      // The contact it was stored under (the usual answer) keeps its conversation as it is: no second write of it.
      const same = typeof contact !== 'string' && contact.contactId === owner.contactId;
      const raised = owner.rank < STATUS_RANK.accepted;
      const current: StatusColumns = { ...owner, status: raised ? 'accepted' : owner.status, statusUpdatedAt: raised ? at : owner.statusUpdatedAt };
      // Patched, not rendered afresh (the send's hot path); null renders it afresh below.
      const listedJson = listed.patchedWithStatus(owner.listed, current, undefined, wamid);
      const accepted = [current.status, current.statusUpdatedAt, STATUS_RANK.accepted, listedJson, messageId] as const;
      if (same) accept.run(wamid, ...accepted);
      else acceptMoved.run(wamid, conversationId(owner.userId, contact, owner.createdAt, null), ...accepted);
      if (listedJson === null) listed.refresh(messageId);
      appendEvent('message.status', messageId, 'accepted', owner.userId);
      // Media sent by the id of an upload: the archive keeps a copy too (fetched back by the download worker, with the
      // inbound files' limits and rules), so the thread shows what was sent. Sent by link: nothing to keep.
      if (owner.mediaJson) enqueueMedia.run(messageId, owner.mediaJson);
      const orphans = orphansOf.all(owner.userId, wamid);
      if (orphans.length > 0) dropOrphans.run(owner.userId, wamid);
      for (const orphan of orphans) {
        applyToMessage(statusRowById.get(messageId)!, { status: orphan.status, at: orphan.at, errorJson: orphan.error_json });
      }
    },

    /** The send failed before the network accepted it (refused, timed out, unreachable). */
    markFailed(messageId: number, errorJson: string, at: number): void {
      fail.run(errorJson, at, messageId);
      listed.refresh(messageId);
      appendEvent('message.status', messageId, 'failed');
    },

    /** A callback status routed to `userId`: applied to that user's outbound message, or kept until its send stores the wamid. */
    applyStatus(userId: number, wamid: string, event: StatusEvent, receivedAt: number): 'applied' | 'orphaned' {
      const row = statusRowByWamid.get(userId, wamid);
      if (!row) {
        insertOrphan.run(userId, wamid, event.status, event.at, event.errorJson, receivedAt);
        return 'orphaned';
      }
      applyToMessage(row, event);
      return 'applied';
    },

    /** Renders the messages stored without their listed JSON (start-up: older databases, raw inserts). */
    fillListedJson: listed.fillMissing,

    /** Stores an inbound message once per user and wamid; false for a redelivery. */
    insertInbound(m: NewInbound): boolean {
      const contact = m.contact ?? refOf(m.userId, m.contactWaId ?? '', m.createdAt, m.contactName ?? null);
      const conversation = conversationId(m.userId, contact, m.createdAt, m.createdAt);
      const row = {
        id: nextMessageId.get()!, userId: m.userId, conversationId: conversation, type: m.type, text: m.text, wamid: m.wamid,
        payloadJson: m.payloadJson, mediaJson: m.mediaJson ?? null, locationJson: m.locationJson ?? null, replyTo: m.replyTo ?? null,
        errorJson: m.errorJson ?? null, createdAt: m.createdAt,
      };
      // As STORED_MESSAGE reads a new inbound row back (test/listed-json.test.ts holds the two equal).
      const listedJson = listed.renderOrNull([row.id, row.wamid, 'inbound', row.type, row.text, null, 'received', row.errorJson, null, row.mediaJson,
        row.locationJson, row.replyTo, row.createdAt, null, null, null, null, null, null, 0,
        row.type === 'interactive' || row.type === 'button' ? row.payloadJson : null]);
      const inserted = insertInboundRow.run({ ...row, listed: listedJson });
      if (inserted.changes === 0) return false;
      const id = Number(inserted.lastInsertRowid);
      if (m.mediaJson) enqueueMedia.run(id, m.mediaJson);
      appendEvent('message.received', id, null, m.userId);
      return true;
    },

    /** Stores an echo (sent by the network's agent or the phone app) once per user and wamid; false for a redelivery. */
    insertEcho(m: NewEcho): boolean {
      const inserted = insertEchoRow.run({
        userId: m.userId, conversationId: conversationId(m.userId, m.contact, m.createdAt, null), type: m.type, text: m.text, to: m.to,
        wamid: m.wamid, origin: m.origin, payloadJson: m.payloadJson, mediaJson: m.mediaJson ?? null, locationJson: m.locationJson ?? null,
        createdAt: m.createdAt,
      });
      if (inserted.changes === 0) return false;
      listed.refresh(Number(inserted.lastInsertRowid));
      return true;
    },

    /** An edit of the user's message `wamid`: its new text; false when that message is unknown. */
    applyEdit(userId: number, wamid: string, text: string | null, at: number): boolean {
      const message = messageByWamid.get(userId, wamid);
      if (!message) return false;
      if (edit.run({ id: message.id, text, at }).changes > 0) {
        listed.refresh(message.id);
        appendEvent('message.edited', message.id);
      }
      return true;
    },

    /** A deletion of the user's message `wamid`: marked revoked; false when that message is unknown. */
    applyRevoke(userId: number, wamid: string): boolean {
      const message = messageByWamid.get(userId, wamid);
      if (!message) return false;
      if (revoke.run(message.id).changes > 0) {
        listed.refresh(message.id);
        appendEvent('message.edited', message.id);
      }
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

    findById: (id: number): MessageRow | undefined => byId.get({ id }),
    /** An outbound message's status history, oldest first (empty for an unknown message). */
    history: (messageId: number): HistoryEntry[] => historyEntries(statusesOf.get(messageId) ?? null),
    orphanCount: (): number => db.select({ n: sql<number>`count(*)` }).from(orphanStatuses).get()?.n ?? 0,
    /** The conversation of a message with its contact's identifiers and name. */
    conversationOf: (messageId: number): ConversationOf | undefined => conversationOf.get(messageId),
  };
}
export type MessagesRepo = ReturnType<typeof createMessagesRepo>;
