// The durable webhook inbox: raw callbacks appended as pending, then settled as processed, failed or dead.
import type { DB } from './client';

export interface ReceivedEvent { receivedAt: number; rawBody: string }
/** A callback and the outcome of its first processing run (`error`: its notes). */
export interface ProcessedEvent extends ReceivedEvent { failed: boolean; error: string | null; at: number; userId: number | undefined }
export interface StoredEvent { id: number; receivedAt: number; rawBody: string }
export type EventState = 'pending' | 'processed' | 'failed' | 'dead';
/** An event as an administrator sees it: everything but the raw body, whose size is given instead. */
export interface EventSummary {
  id: number; state: EventState; attempts: number; receivedAt: number; processedAt: number | null; error: string | null; rawBytes: number;
}
/** At least one state. */
export interface EventPage { states: readonly ('failed' | 'dead')[]; beforeId?: number | undefined; limit: number }

// `state <> 'processed'` lets SQLite use the partial index webhook_events_state; octet_length reads no text.
const SUMMARY = `SELECT id, state, attempts, received_at AS receivedAt, processed_at AS processedAt, error,
  octet_length(raw_body) AS rawBytes FROM webhook_events`;

export function createWebhookEventsRepo(db: DB) {
  const client = db.$client;
  // A callback is stored once, with the outcome of its first processing run (one row write on the webhook's hot path).
  const insert = client.prepare<[number, string, string, string | null, number, number | null]>(`INSERT INTO webhook_events (received_at,
    raw_body, state, error, attempts, processed_at, user_id) VALUES (?, ?, ?, ?, 1, ?, ?)`);
  // One conditional UPDATE counts the attempt and decides the state: a failure at the last allowed attempt is dead.
  const settle = client.prepare<Record<string, unknown>, { state: EventState; attempts: number }>(`UPDATE webhook_events
    SET attempts = attempts + 1, error = @error, processed_at = @at, user_id = coalesce(@userId, user_id),
      state = CASE WHEN NOT @failed THEN 'processed' WHEN attempts + 1 >= @maxAttempts THEN 'dead' ELSE 'failed' END
    WHERE id = @id RETURNING state, attempts`);
  const replayIds = client.prepare<[number, number], number>(`SELECT id FROM webhook_events
    WHERE state <> 'processed' AND state IN ('pending', 'failed') AND id > ? ORDER BY id LIMIT ?`).pluck();
  const byId = client.prepare<[number], StoredEvent>('SELECT id, received_at AS receivedAt, raw_body AS rawBody FROM webhook_events WHERE id = ?');
  const summary = client.prepare<[number], EventSummary>(`${SUMMARY} WHERE id = ?`);
  const page = client.prepare<[string, string, number, number], EventSummary>(`${SUMMARY}
    WHERE state <> 'processed' AND state IN (?, ?) AND id < ? ORDER BY id DESC LIMIT ?`);
  // Oldest first along the partial index of processed events; one batch per write (no long write lock).
  const deleteProcessed = client.prepare<[number, number]>(`DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events
    WHERE state = 'processed' AND received_at < ? ORDER BY received_at LIMIT ?)`);
  // Along webhook_events_user: callbacks routed to no user, newest first (their bodies, to read the number they were for).
  const unrouted = client.prepare<[number, number], StoredEvent & { state: EventState }>(`SELECT id, received_at AS receivedAt,
    raw_body AS rawBody, state FROM webhook_events WHERE user_id IS NULL AND state = 'processed' AND id < ? ORDER BY id DESC LIMIT ?`);
  const backlog = client.prepare<[], { state: EventState; n: number }>(`SELECT state, count(*) AS n FROM webhook_events
    WHERE state <> 'processed' GROUP BY state`);
  // Called inside itself it is a savepoint; at the top a transaction: one fsync (synchronous=FULL) for a whole batch.
  const runAtomic = client.transaction((body: () => unknown) => body());

  return {
    /**
     * Stores a callback with the outcome of its first processing run, in the write that applied it; its id. Throws
     * when that write's transaction is gone: SQLite rolls it back on a full disk or an I/O error, and a processing
     * step that caught that error must not leave this row to be written alone, outside any transaction.
     */
    insertProcessed(event: ProcessedEvent): number {
      if (!client.inTransaction) throw new Error('the transaction was rolled back while the callback was processed');
      const state = event.failed ? 'failed' : 'processed';
      return Number(insert.run(event.receivedAt, event.rawBody, state, event.error, event.at, event.userId ?? null).lastInsertRowid);
    },
    /**
     * Records one processing attempt; a failure at attempt `maxAttempts` or later makes the event dead.
     * `userId` links the event to the user it was routed to (a link once made stays).
     */
    settle: (id: number, failed: boolean, error: string | null, at: number, maxAttempts: number, userId?: number) =>
      settle.get({ id, failed: failed ? 1 : 0, error, at, maxAttempts, userId: userId ?? null }),
    /** Deletes up to `limit` processed events received before `before` (ms); how many went. */
    deleteProcessedBefore: (before: number, limit: number): number => deleteProcessed.run(before, limit).changes,
    /** Ids of pending or failed events after `afterId`, oldest first (dead ones wait for an administrator). */
    replayIds: (afterId: number, limit: number): number[] => replayIds.all(afterId, limit),
    byId: (id: number): StoredEvent | undefined => byId.get(id),
    summary: (id: number): EventSummary | undefined => summary.get(id),
    /** Events in `states` with an id below `beforeId`, newest first. */
    page: (q: EventPage): EventSummary[] =>
      page.all(q.states[0] ?? 'failed', q.states[1] ?? q.states[0] ?? 'dead', q.beforeId ?? Number.MAX_SAFE_INTEGER, q.limit),
    /** Processed events no user was found for, with an id below `beforeId`, newest first; read lazily (stop early). */
    unrouted: (beforeId: number | undefined, limit: number) => unrouted.iterate(beforeId ?? Number.MAX_SAFE_INTEGER, limit),
    /** Events not processed yet, by state: one count over the partial index (metrics). */
    backlog: (): Record<string, number> => Object.fromEntries(backlog.all().map((row) => [row.state, row.n])),
    /** Runs `body` atomically: a transaction, or a savepoint inside one. Keep `body` synchronous. */
    atomic: <T>(body: () => T): T => runAtomic.immediate(body) as T,
  };
}
export type WebhookEventsRepo = ReturnType<typeof createWebhookEventsRepo>;
