// Monthly credit counters: one row per user and month, moved only by single conditional statements.
import { and, eq, sql } from 'drizzle-orm';
import type { DB } from './client';
import { creditUsage } from './tables';

export function createCreditsRepo(db: DB) {
  const used = db.select({ used: creditUsage.used }).from(creditUsage)
    .where(and(eq(creditUsage.userId, sql.placeholder('userId')), eq(creditUsage.month, sql.placeholder('month')))).prepare();

  return {
    used: (userId: number, month: string): number => used.get({ userId, month })?.used ?? 0,

    /** Takes one credit if `allowance` leaves one; false when exhausted. One statement: no overspend. */
    reserve(userId: number, month: string, allowance: number): boolean {
      if (allowance <= 0) return false;
      const result = db.insert(creditUsage).values({ userId, month, used: 1 })
        .onConflictDoUpdate({
          target: [creditUsage.userId, creditUsage.month],
          set: { used: sql`${creditUsage.used} + 1` },
          setWhere: sql`${creditUsage.used} < ${allowance}`,
        }).run();
      return result.changes > 0;
    },

    refund(userId: number, month: string): void {
      db.update(creditUsage).set({ used: sql`max(${creditUsage.used} - 1, 0)` })
        .where(and(eq(creditUsage.userId, userId), eq(creditUsage.month, month))).run();
    },
  };
}
export type CreditsRepo = ReturnType<typeof createCreditsRepo>;
