// Sessions ended by logout: the jti of each such JWT, kept until the JWT would have expired anyway.
import { eq, lte, sql } from 'drizzle-orm';
import type { DB } from './client';
import { revokedSessions } from './tables';

export function createSessionsRepo(db: DB) {
  const lookup = db.select({ jti: revokedSessions.jti }).from(revokedSessions)
    .where(eq(revokedSessions.jti, sql.placeholder('jti'))).prepare();
  const insert = db.insert(revokedSessions)
    .values({ jti: sql.placeholder('jti'), expiresAt: sql.placeholder('expiresAt') })
    .onConflictDoNothing().prepare();
  const prune = db.delete(revokedSessions).where(lte(revokedSessions.expiresAt, sql.placeholder('now'))).prepare();

  return {
    /** One primary-key lookup: runs on every authenticated request. */
    isRevoked: (jti: string): boolean => lookup.get({ jti }) !== undefined,
    /** `expiresAt` (ms): when the JWT stops being valid by itself, after which the row may go. */
    revoke: (jti: string, expiresAt: number): void => {
      insert.run({ jti, expiresAt });
    },
    /** Deletes the rows of JWTs expired at `now` (ms); answers how many went. */
    prune: (now: number): number => prune.run({ now }).changes,
  };
}
export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
