// Idempotency keys per user: claimed before a send, completed with its answer or released when it fails.
import type { DB } from './client';

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' };

export interface ClaimTimes {
  /** Keys created before this are forgotten. */
  expiredBefore: number;
  /** In-flight claims created before this were abandoned (a crash mid-send) and may be taken over. */
  abandonedBefore: number;
}

interface KeyRow { requestHash: string; responseStatus: number | null; responseBody: string | null }

export function createIdempotencyRepo(db: DB) {
  const client = db.$client;
  const forgetExpired = client.prepare<[number, string, number]>('DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND created_at < ?');
  // One conditional upsert decides who owns the key: a new key, or an in-flight one its owner abandoned.
  const take = client.prepare<{ userId: number; key: string; hash: string; now: number; abandonedBefore: number }>(`
    INSERT INTO idempotency_keys (user_id, key, request_hash, created_at) VALUES (@userId, @key, @hash, @now)
    ON CONFLICT (user_id, key) DO UPDATE SET request_hash = @hash, response_status = NULL, response_body = NULL, created_at = @now
    WHERE response_status IS NULL AND created_at < @abandonedBefore`);
  const row = client.prepare<[number, string], KeyRow>(`SELECT request_hash AS requestHash, response_status AS responseStatus,
    response_body AS responseBody FROM idempotency_keys WHERE user_id = ? AND key = ?`);
  const complete = client.prepare<[status: number, body: string, userId: number, key: string]>(
    'UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE user_id = ? AND key = ?');
  const release = client.prepare<[number, string]>(
    'DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND response_status IS NULL');

  return {
    /** Callers run it inside their send's write, so the claim and the credit go together. */
    claim(userId: number, key: string, requestHash: string, now: number, times: ClaimTimes): Claim {
      forgetExpired.run(userId, key, times.expiredBefore);
      if (take.run({ userId, key, hash: requestHash, now, abandonedBefore: times.abandonedBefore }).changes > 0) return { kind: 'claimed' };
      const stored = row.get(userId, key)!;
      if (stored.requestHash !== requestHash) return { kind: 'mismatch' };
      if (stored.responseStatus === null || stored.responseBody === null) return { kind: 'in_flight' };
      return { kind: 'replay', status: stored.responseStatus, body: stored.responseBody };
    },

    complete(userId: number, key: string, status: number, body: string): void {
      complete.run(status, body, userId, key);
    },

    /** Frees an in-flight key (the send failed and charged nothing): a retry with it sends again. */
    release(userId: number, key: string): void {
      release.run(userId, key);
    },
  };
}
export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
