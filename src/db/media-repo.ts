// The inbound media archive's queue (media_downloads): due downloads, their retries and outcomes, and what the
// media route needs. Each outcome also lands in the message's media_json and its listed JSON, in the same write.
import type { DB } from './client';
import { eventLogOf } from './events-repo';
import { createListedMessages, type MessageRenderer } from './listed-messages';

export interface DueDownload {
  messageId: number; userId: number; attempts: number; firstAttemptAt: number | null;
  mediaJson: string | null; sealedToken: string | null;
}
/** The message behind GET /api/media/{id}, with its download's state (null: nothing to download). */
export interface MediaOfMessage {
  userId: number; type: string; mediaJson: string | null;
  state: 'pending' | 'stored' | 'failed' | null; mimeType: string | null; size: number | null;
}
export type FinalMediaError = 'sha256_mismatch' | 'too_large' | 'lookup_refused' | 'download_refused' | 'url_refused' | 'unavailable';

export function createMediaRepo(db: DB, renderer: MessageRenderer) {
  const client = db.$client;
  const listed = createListedMessages(client, renderer);
  const appendEvent = eventLogOf(client).append;
  const due = client.prepare<[number, number], DueDownload>(`SELECT d.message_id AS messageId, m.user_id AS userId,
      d.attempts, d.first_attempt_at AS firstAttemptAt, m.media_json AS mediaJson, u.messaging_token AS sealedToken
    FROM media_downloads d JOIN messages m ON m.id = d.message_id JOIN users u ON u.id = m.user_id
    WHERE d.state = 'pending' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.message_id LIMIT ?`);
  const retry = client.prepare<{ id: number; next: number; first: number; error: string }>(`UPDATE media_downloads
    SET attempts = attempts + 1, next_attempt_at = @next, first_attempt_at = coalesce(first_attempt_at, @first), error = @error
    WHERE message_id = @id AND state = 'pending'`);
  const settle = client.prepare<{ id: number; state: 'stored' | 'failed'; error: string | null; mime: string | null; size: number | null; at: number; first: number }>(`
    UPDATE media_downloads SET state = @state, error = @error, mime_type = @mime, size = @size, settled_at = @at,
      attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, @first)
    WHERE message_id = @id AND state = 'pending'`);
  // What the listing shows: `stored` and `error` beside the network's media fields.
  const mark = client.prepare<{ id: number; stored: number; error: string | null }>(`UPDATE messages
    SET media_json = json_set(media_json, '$.stored', json(CASE WHEN @stored THEN 'true' ELSE 'false' END), '$.error', @error)
    WHERE id = @id AND json_valid(media_json)`);
  // A file sent by an upload's id (outbound media carry no type): the type it was archived with, so it shows as it is.
  const typeIfNone = client.prepare<{ id: number; mime: string }>(`UPDATE messages SET media_json = json_set(media_json, '$.mime_type', @mime)
    WHERE id = @id AND json_valid(media_json) AND json_extract(media_json, '$.mime_type') IS NULL`);
  const ofMessage = client.prepare<[number], MediaOfMessage>(`SELECT m.user_id AS userId, m.type, m.media_json AS mediaJson,
      d.state, d.mime_type AS mimeType, d.size
    FROM messages m LEFT JOIN media_downloads d ON d.message_id = m.id WHERE m.id = ?`);
  // No room now: due again later, the attempt not counted (the 24 h clock is the network's, not the disk's).
  const later = client.prepare<{ id: number; next: number }>(`UPDATE media_downloads SET next_attempt_at = @next, error = 'no_space'
    WHERE message_id = @id AND state = 'pending'`);
  const storedBytes = client.prepare<[], number>(`SELECT coalesce(sum(size), 0) FROM media_downloads WHERE state = 'stored'`).pluck();
  const storedAmong = client.prepare<[string], number>(`SELECT message_id FROM media_downloads
    WHERE state = 'stored' AND message_id IN (SELECT value FROM json_each(?))`).pluck();
  const storedIds = client.prepare<[], number>(`SELECT message_id FROM media_downloads WHERE state = 'stored' ORDER BY message_id`).pluck();
  const requeue = client.prepare<[number]>(`UPDATE media_downloads SET state = 'pending', attempts = 0, next_attempt_at = 0,
      first_attempt_at = NULL, error = NULL, mime_type = NULL, size = NULL, settled_at = NULL
    WHERE message_id = ? AND state = 'stored'`);

  function settleAs(id: number, state: 'stored' | 'failed', fields: { error?: FinalMediaError; mime?: string; size?: number }, at: number): boolean {
    const changed = settle.run({ id, state, error: fields.error ?? null, mime: fields.mime ?? null, size: fields.size ?? null, at, first: at }).changes > 0;
    if (!changed) return false;
    mark.run({ id, stored: state === 'stored' ? 1 : 0, error: fields.error ?? null });
    if (state === 'stored' && fields.mime) typeIfNone.run({ id, mime: fields.mime });
    listed.refresh(id);
    appendEvent('message.media', id);
    return true;
  }

  return {
    /** Up to `limit` pending downloads due at `now` (ms), oldest due first. */
    due: (now: number, limit: number): DueDownload[] => due.all(now, limit),
    /** An attempt failed but may succeed later: counted, and due again at `next` (call inside a write). */
    retryAt: (id: number, next: number, now: number, error: string): boolean =>
      retry.run({ id, next, first: now, error: error.slice(0, 300) }).changes > 0,
    /** The file is in place: the message lists it as stored. False when the message is gone (call inside a write). */
    stored: (id: number, mime: string, size: number, now: number): boolean => settleAs(id, 'stored', { mime, size }, now),
    /** Final failure: the message lists `error`. False when the message is gone (call inside a write). */
    failed: (id: number, error: FinalMediaError, now: number): boolean => settleAs(id, 'failed', { error }, now),
    /** No room in the archive now: due again at `next`, listed with error `no_space` meanwhile (call inside a write). */
    noSpace(id: number, next: number): boolean {
      if (later.run({ id, next }).changes === 0) return false;
      mark.run({ id, stored: 0, error: 'no_space' });
      listed.refresh(id);
      return true;
    },
    /** Bytes of all stored files together (the archive's size). */
    storedBytes: (): number => storedBytes.get() ?? 0,
    /** The message (any) with its media and download state; undefined when no such message. */
    ofMessage: (id: number): MediaOfMessage | undefined => ofMessage.get(id),
    /** Which of these message ids have a stored file on record (the orphan-file sweep keeps those). */
    storedAmong: (ids: readonly number[]): Set<number> => new Set(ids.length === 0 ? [] : storedAmong.all(JSON.stringify(ids))),
    /** Every message id whose file is on record as stored (start-up checks them against the folder). */
    storedIds: (): number[] => storedIds.all(),
    /** A stored file that is not there (a restore without it): downloaded again, listed `stored: false` meanwhile (call inside a write). */
    requeue(id: number): boolean {
      if (requeue.run(id).changes === 0) return false;
      mark.run({ id, stored: 0, error: null });
      listed.refresh(id);
      return true;
    },
  };
}
export type MediaRepo = ReturnType<typeof createMediaRepo>;
