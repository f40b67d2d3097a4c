// Each message's listed JSON (messages.listed_json): read a message as the renderer needs it, render and store it
// after every write that changes it, and fill rows stored without it (older databases, raw inserts).
import type Database from 'better-sqlite3';

export type StoredStatus = [status: string, at: number, errorJson: string | null, pricingJson?: string | null];
/** A message as read for display: a tuple, because rows leave SQLite as JSON arrays (see below). */
export type StoredMessage = [
  id: number, wamid: string | null, direction: 'inbound' | 'outbound', type: string, text: string | null, toNumber: string | null,
  status: string, errorJson: string | null, templateJson: string | null, mediaJson: string | null, locationJson: string | null,
  replyTo: string | null, createdAt: number, statusUpdatedAt: number | null,
  /** Outbound: the status history, oldest first; null for inbound messages. */
  statuses: StoredStatus[] | null,
  origin?: string | null, pricingJson?: string | null, editedAt?: number | null, editsJson?: string | null, revoked?: number | null,
  /** Inbound replies (interactive, button): the network's message object, for what the customer tapped. */
  payloadJson?: string | null,
];
/** One message as the conversations answer lists it: JSON object text. The only renderer (views decide the shape). */
export type RenderMessage = (row: StoredMessage) => string;
/** The columns of an outbound message that a status callback changes. */
export interface StatusColumns { status: string; statusUpdatedAt: number | null; errorJson: string | null; pricingJson: string | null }
export interface MessageRenderer {
  render: RenderMessage;
  /** `listed` after a status callback changed `current` and maybe `added` an entry to the history, or the network's
   * acceptance gave it its `wamid`: the same as `render` of the new row. */
  withStatus(listed: string, current: StatusColumns, added: StoredStatus | undefined, wamid?: string): string;
}

// Messages leave SQLite as JSON arrays with their status histories: JSON.parse builds them faster than
// reading the columns one by one. Same order as StoredMessage.
const COLUMNS = `m.id, m.wamid, m.direction, m.type, m.text, m.to_number, m.status, m.error_json, m.template_json, m.media_json,
  m.location_json, m.reply_to, m.created_at, m.status_updated_at`;
/** SQL of one message `m` as a StoredMessage JSON array. A history that is not JSON (only a hand edit makes one) shows
 * as empty, as the next status callback starts it again. */
export const STORED_MESSAGE = `json_array(${COLUMNS}, CASE WHEN m.direction = 'outbound' THEN
    CASE WHEN json_valid(m.statuses_json) THEN json(m.statuses_json) ELSE json_array() END END,
    m.origin, m.pricing_json, m.edited_at, m.edits_json, m.revoked,
    CASE WHEN m.direction = 'inbound' AND m.type IN ('interactive', 'button') THEN m.payload_json END)`;

const BACKFILL_BATCH = 500;

export function createListedMessages(client: Database.Database, { render, withStatus }: MessageRenderer) {
  const stored = client.prepare<[number], string>(`SELECT ${STORED_MESSAGE} FROM messages m WHERE m.id = ?`).pluck();
  const store = client.prepare<[string | null, number]>('UPDATE messages SET listed_json = ? WHERE id = ?');
  const missing = client.prepare<[number], number>(
    'SELECT id FROM messages WHERE listed_json IS NULL AND id > ? ORDER BY id LIMIT ' + BACKFILL_BATCH).pluck();

  /** The listed JSON of one stored message; throws what the renderer throws. */
  const renderStored = (text: string): string => render(JSON.parse(text) as StoredMessage);

  /** Renders message `id` again from its row and history (call after, and in the transaction of, every change to it). */
  function refresh(id: number): void {
    const text = stored.get(id);
    if (text === undefined) return;
    let listed: string | null;
    try {
      listed = renderStored(text);
    } catch {
      // A row the renderer cannot show (e.g. a date beyond what Date holds) must not fail the write: listings render it then.
      listed = null;
    }
    store.run(listed, id);
  }

  return {
    refresh,
    /** The listed JSON of a message not stored yet, from the row STORED_MESSAGE would read; null when it cannot be shown. */
    renderOrNull(row: StoredMessage): string | null {
      try {
        return render(row);
      } catch {
        return null;
      }
    },
    /**
     * The listed JSON `listed` patched after a status callback changed `current` (and `added` an entry to the history),
     * or after the acceptance that gave the message its `wamid`:
     * several times cheaper than rendering afresh on the webhook's hot path. Null when there is none or the patch cannot
     * read it: then render the message afresh (`refresh`) once it is stored.
     */
    patchedWithStatus(listed: string | null, current: StatusColumns, added: StoredStatus | undefined, wamid?: string): string | null {
      if (listed === null) return null;
      try {
        return withStatus(listed, current, added, wamid);
      } catch {
        return null;
      }
    },
    /** Renders every message stored without its listed JSON, in batches (start-up); returns how many were seen. */
    fillMissing(): number {
      let seen = 0;
      for (let ids = missing.all(0); ids.length > 0; ids = missing.all(ids.at(-1)!)) {
        client.transaction(() => ids.forEach(refresh)).immediate();
        seen += ids.length;
      }
      return seen;
    },
  };
}
export type ListedMessages = ReturnType<typeof createListedMessages>;
