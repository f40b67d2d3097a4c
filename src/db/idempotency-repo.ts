// Idempotency keys per user: claimed before a send, bound to its message, completed with its answer (success or failure)
// once the network was called. A key never causes a second network call: an in-flight key is never taken over, whatever its age.
import type { DB } from './client';

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'mismatch' }
  /** Still without an answer: running now, or its outcome was never stored. `messageId`: the message it is bound to. */
  | { kind: 'in_flight'; messageId: number | null };

export interface ClaimTimes {
  /** Keys created before this are forgotten. */
  expiredBefore: number;
}

/** A key answers the same request for a day; after that it is forgotten (and a retention job deletes it). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;

interface KeyRow { requestHash: string; responseStatus: number | null; responseBody: string | null }

/**
 * While a key is in flight (response_status NULL) its response_body holds `{"message_id":N}`: the message the
 * key is bound to (no column of its own; the answer replaces it once known).
 */
const boundMessageId = (body: string | null): number | null => {
  const match = body === null ? null : /^\{"message_id":(\d+)\}$/.exec(body);
  return match ? Number(match[1]) : null;
};

export function createIdempotencyRepo(db: DB) {
  const client = db.$client;
  const forgetExpired = client.prepare<[number, string, number]>('DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND created_at < ?');
  // One insert-or-ignore decides who owns the key: only a new (or expired, hence deleted) key can be claimed.
  const take = client.prepare<{ userId: number; key: string; hash: string; now: number }>(`
    INSERT INTO idempotency_keys (user_id, key, request_hash, created_at) VALUES (@userId, @key, @hash, @now)
    ON CONFLICT (user_id, key) DO NOTHING`);
  const row = client.prepare<[number, string], KeyRow>(`SELECT request_hash AS requestHash, response_status AS responseStatus,
    response_body AS responseBody FROM idempotency_keys WHERE user_id = ? AND key = ?`);
  const bind = client.prepare<[body: string, userId: number, key: string]>(
    'UPDATE idempotency_keys SET response_body = ? WHERE user_id = ? AND key = ? AND response_status IS NULL');
  const complete = client.prepare<[status: number, body: string, userId: number, key: string]>(
    'UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE user_id = ? AND key = ?');

  return {
    /** Callers run it inside their send's write, so the claim and the credit go together. A key older than
     * IDEMPOTENCY_KEY_TTL_MS at `now` is forgotten first, unless `times` says otherwise. */
    claim(userId: number, key: string, requestHash: string, now: number, times: ClaimTimes = { expiredBefore: now - IDEMPOTENCY_KEY_TTL_MS }): Claim {
      forgetExpired.run(userId, key, times.expiredBefore);
      if (take.run({ userId, key, hash: requestHash, now }).changes > 0) return { kind: 'claimed' };
      const stored = row.get(userId, key)!;
      if (stored.requestHash !== requestHash) return { kind: 'mismatch' };
      if (stored.responseStatus === null) return { kind: 'in_flight', messageId: boundMessageId(stored.responseBody) };
      return { kind: 'replay', status: stored.responseStatus, body: stored.responseBody ?? '' };
    },

    /** Binds a claimed key to the message its send stored (in the same write as the claim). */
    bind(userId: number, key: string, messageId: number): void {
      bind.run(JSON.stringify({ message_id: messageId }), userId, key);
    },

    complete(userId: number, key: string, status: number, body: string): void {
      complete.run(status, body, userId, key);
    },
  };
}
export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
