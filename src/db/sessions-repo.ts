// Sessions ended by logout: the jti of each such JWT, kept until the JWT would have expired anyway.
import { eq, sql } from 'drizzle-orm';
import { inTransaction, type DB } from './client';
import { revokedSessions } from './tables';

export function createSessionsRepo(db: DB) {
  const lookup = db.select({ jti: revokedSessions.jti }).from(revokedSessions)
    .where(eq(revokedSessions.jti, sql.placeholder('jti'))).prepare();
  const insert = db.insert(revokedSessions)
    .values({ jti: sql.placeholder('jti'), expiresAt: sql.placeholder('expiresAt') })
    .onConflictDoNothing().prepare();
  const pruneBatch = db.$client.prepare<[number, number]>(`DELETE FROM revoked_sessions WHERE jti IN
    (SELECT jti FROM revoked_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`);

  return {
    /** One primary-key lookup: runs on every authenticated request. */
    isRevoked: (jti: string): boolean => lookup.get({ jti }) !== undefined,
    /**
     * Ends a session until `expiresAt` (ms), when its JWT stops being valid by itself. Rows already past
     * theirs at `now` go in the same transaction (one commit), so the table holds only sessions that could come back.
     */
    revoke: (jti: string, expiresAt: number, now: number): void => inTransaction(db, () => {
      pruneBatch.run(now, -1);
      insert.run({ jti, expiresAt });
    }),
    /** Deletes the rows of JWTs expired at `now` (ms), at most `limit` (a retention batch; -1: all); answers how many went. */
    prune: (now: number, limit = -1): number => pruneBatch.run(now, limit).changes,
  };
}
export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
