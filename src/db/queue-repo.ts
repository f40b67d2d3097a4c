// The send queue is the messages table: outbound rows with status `queued` or `scheduled`, due from `send_at`, in
// order of priority (0: a reply inside the contact's 24 h window, 1: bulk), then due time, then id. Every move is one
// conditional UPDATE, so a claim, a cancel and an expiry of the same row can never both win. Each move appends its
// message.status event (pending, queued again, failed) in the same write. A message enters the queue as it is stored
// (messages-repo's insertOutbound with its QueuePlacement).
import type { DB } from './client';
import { eventLogOf } from './events-repo';
import { createListedMessages, type MessageRenderer } from './listed-messages';
import { STATUS_RANK } from './messages-repo';

const WAITING = "status IN ('queued', 'scheduled')";
/** A claimed row: what the worker needs to send it. The recipient is the stored row's. */
export interface ClaimedMessage { id: number; userId: number; to: string; payloadJson: string; createdAt: number }
export interface Settled { id: number; userId: number; createdAt: number }
export interface QueueStats { userId: number; depth: number; oldest: number }
/** A waiting message as the console lists it. */
export interface WaitingMessage { id: number; to: string; status: 'queued' | 'scheduled'; sendAt: number; expiresAt: number | null; createdAt: number }

export function createQueueRepo(db: DB, renderer: MessageRenderer) {
  const client = db.$client;
  const listed = createListedMessages(client, renderer);
  const appendEvent = eventLogOf(client).append;
  const claim = client.prepare<{ userId: number; now: number }, ClaimedMessage>(`UPDATE messages SET status = 'pending', status_rank = 0
    WHERE id = (SELECT id FROM messages WHERE user_id = @userId AND ${WAITING} AND send_at <= @now
                  AND (expires_at IS NULL OR expires_at > @now) ORDER BY priority, send_at, id LIMIT 1)
      AND ${WAITING}
    RETURNING id, user_id AS userId, to_number AS "to", payload_json AS payloadJson, created_at AS createdAt`);
  const requeue = client.prepare<[number, number]>(
    "UPDATE messages SET status = 'queued', send_at = ? WHERE id = ? AND status = 'pending' AND wamid IS NULL");
  const hold = client.prepare<{ until: number; userId: number; to: string }>(
    `UPDATE messages SET send_at = max(send_at, @until) WHERE user_id = @userId AND to_number = @to AND ${WAITING}`);
  const fail = (where: string) => client.prepare(`UPDATE messages SET status = 'failed', status_rank = ${STATUS_RANK.failed},
    error_json = @error, status_updated_at = @at WHERE ${WAITING} AND ${where} RETURNING id, user_id AS userId, created_at AS createdAt`);
  const cancel = fail('id = @id AND user_id = @userId');
  const expire = fail('user_id = @userId AND expires_at <= @at');
  const statusOf = client.prepare<[number, number], string>('SELECT status FROM messages WHERE id = ? AND user_id = ? AND direction = \'outbound\'').pluck();
  const nextDue = client.prepare<[number], { sendAt: number | null; expiresAt: number | null }>(
    `SELECT min(send_at) AS sendAt, min(expires_at) AS expiresAt FROM messages WHERE user_id = ? AND ${WAITING}`);
  const waitingUsers = client.prepare<[], number>(`SELECT DISTINCT user_id FROM messages WHERE ${WAITING}`).pluck();
  const waiting = client.prepare<[number, number], WaitingMessage>(`SELECT id, to_number AS "to", status, send_at AS sendAt,
    expires_at AS expiresAt, created_at AS createdAt FROM messages WHERE user_id = ? AND ${WAITING} ORDER BY priority, send_at, id LIMIT ?`);
  const stats = client.prepare<[], QueueStats>(
    `SELECT user_id AS userId, count(*) AS depth, min(created_at) AS oldest FROM messages WHERE ${WAITING} GROUP BY user_id`);

  const failedAll = <T extends { id: number }>(rows: T[]): T[] => {
    for (const row of rows) {
      listed.refresh(row.id);
      appendEvent('message.status', row.id, 'failed');
    }
    return rows;
  };

  return {
    /** The user's next due message, now `pending` (call inside a write); undefined when none is due. */
    claimNext(userId: number, now: number): ClaimedMessage | undefined {
      const row = claim.get({ userId, now });
      if (row) {
        listed.refresh(row.id);
        appendEvent('message.status', row.id, 'pending');
      }
      return row;
    },
    /** A claimed message the network did not take (throttled): back in the queue, due at `sendAt`. */
    requeue(id: number, sendAt: number): boolean {
      const moved = requeue.run(sendAt, id).changes > 0;
      if (moved) {
        listed.refresh(id);
        appendEvent('message.status', id, 'queued');
      }
      return moved;
    },
    /** The waiting messages of `userId` to `to` are not due before `until` (131056: that recipient is held). */
    holdRecipient: (userId: number, to: string, until: number): number => hold.run({ until, userId, to }).changes,
    /** Cancels a waiting message of `userId`: the row moved, or its status (undefined: no such message of this user). */
    cancel(userId: number, id: number, errorJson: string, at: number): Settled | string | undefined {
      const [row] = failedAll(cancel.all({ id, userId, error: errorJson, at }) as Settled[]);
      return row ?? statusOf.get(id, userId);
    },
    /** Fails the waiting messages of `userId` whose expiry has come (call inside a write). */
    expire: (userId: number, at: number, errorJson: string): Settled[] => failedAll(expire.all({ userId, at, error: errorJson }) as Settled[]),
    /** The earliest due time and the earliest expiry among the waiting messages of `userId`. */
    nextDue: (userId: number) => nextDue.get(userId) ?? { sendAt: null, expiresAt: null },
    waitingUsers: (): number[] => waitingUsers.all(),
    stats: (): QueueStats[] => stats.all(),
    /** The first `limit` waiting messages of `userId`, in the order the worker takes them. */
    waiting: (userId: number, limit: number): WaitingMessage[] => waiting.all(userId, limit),
  };
}
export type QueueRepo = ReturnType<typeof createQueueRepo>;
