// Idempotency keys per user: claimed before a send, completed with its answer or released when it fails.
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { DB } from './client';
import { idempotencyKeys } from './tables';

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

export function createIdempotencyRepo(db: DB) {
  const rowOf = (userId: number, key: string) =>
    and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key));

  return {
    /** One conditional upsert decides who owns the key; callers run it inside their send transaction. */
    claim(userId: number, key: string, requestHash: string, now: number, times: ClaimTimes): Claim {
      db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, times.expiredBefore)).run();
      const taken = db.insert(idempotencyKeys).values({ userId, key, requestHash, createdAt: now })
        .onConflictDoUpdate({
          target: [idempotencyKeys.userId, idempotencyKeys.key],
          set: { requestHash, responseStatus: null, responseBody: null, createdAt: now },
          setWhere: and(isNull(idempotencyKeys.responseStatus), lt(idempotencyKeys.createdAt, times.abandonedBefore)),
        }).run();
      if (taken.changes > 0) return { kind: 'claimed' };
      const row = db.select().from(idempotencyKeys).where(rowOf(userId, key)).get()!;
      if (row.requestHash !== requestHash) return { kind: 'mismatch' };
      if (row.responseStatus === null || row.responseBody === null) return { kind: 'in_flight' };
      return { kind: 'replay', status: row.responseStatus, body: row.responseBody };
    },

    complete(userId: number, key: string, status: number, body: string): void {
      db.update(idempotencyKeys).set({ responseStatus: status, responseBody: body }).where(rowOf(userId, key)).run();
    },

    /** Frees an in-flight key (the send failed and charged nothing): a retry with it sends again. */
    release(userId: number, key: string): void {
      db.delete(idempotencyKeys).where(and(rowOf(userId, key), isNull(idempotencyKeys.responseStatus))).run();
    },
  };
}
export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
