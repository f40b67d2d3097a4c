// The durable webhook inbox: raw callbacks appended as pending, then settled as processed or failed.
import type { DB } from './client';

export interface ReceivedEvent { receivedAt: number; rawBody: string }
export interface StoredEvent { id: number; receivedAt: number; rawBody: string }
export type EventState = 'processed' | 'failed';

export function createWebhookEventsRepo(db: DB) {
  const client = db.$client;
  const insert = client.prepare<[number, string]>("INSERT INTO webhook_events (received_at, raw_body, state) VALUES (?, ?, 'pending')");
  const settle = client.prepare<[EventState, string | null, number, number]>(
    'UPDATE webhook_events SET state = ?, error = ?, processed_at = ? WHERE id = ?');
  const unprocessedPage = client.prepare<[number, number], StoredEvent>(`
    SELECT id, received_at AS receivedAt, raw_body AS rawBody FROM webhook_events
    WHERE state <> 'processed' AND id > ? ORDER BY id LIMIT ?`);
  // Called inside itself it is a savepoint; at the top a transaction: one fsync (synchronous=FULL) for a whole batch.
  const runAtomic = client.transaction((body: () => unknown) => body());

  return {
    /** Inserts the events as pending (call inside `atomic`); their ids in the same order. */
    append: (events: readonly ReceivedEvent[]): number[] =>
      events.map((event) => Number(insert.run(event.receivedAt, event.rawBody).lastInsertRowid)),
    settle: (id: number, state: EventState, error: string | null, at: number): void => {
      settle.run(state, error, at, id);
    },
    /** Pending or failed events after `afterId`, oldest first. */
    unprocessed: (afterId: number, limit: number): StoredEvent[] => unprocessedPage.all(afterId, limit),
    /** Runs `body` atomically: a transaction, or a savepoint inside one. Keep `body` synchronous. */
    atomic: <T>(body: () => T): T => runAtomic.immediate(body) as T,
  };
}
export type WebhookEventsRepo = ReturnType<typeof createWebhookEventsRepo>;
