// Monthly credit counters: one row per user and month, moved only by single conditional statements.
import type { DB } from './client';

export function createCreditsRepo(db: DB) {
  const client = db.$client;
  const used = client.prepare<[number, string], number>('SELECT used FROM credit_usage WHERE user_id = ? AND month = ?').pluck();
  // One statement takes a credit only while the allowance leaves one: concurrent sends cannot overspend.
  const reserve = client.prepare<{ userId: number; month: string; allowance: number }>(`
    INSERT INTO credit_usage (user_id, month, used) VALUES (@userId, @month, 1)
    ON CONFLICT (user_id, month) DO UPDATE SET used = used + 1 WHERE used < @allowance`);
  const refund = client.prepare<[number, string]>('UPDATE credit_usage SET used = max(used - 1, 0) WHERE user_id = ? AND month = ?');
  const usedInMonth = client.prepare<[string], number>('SELECT coalesce(sum(used), 0) FROM credit_usage WHERE month = ?').pluck();

  return {
    used: (userId: number, month: string): number => used.get(userId, month) ?? 0,
    /** Credits used in `month` by all users together (metrics). */
    usedInMonth: (month: string): number => usedInMonth.get(month) ?? 0,

    /** Takes one credit if `allowance` leaves one; false when exhausted. */
    reserve: (userId: number, month: string, allowance: number): boolean =>
      allowance > 0 && reserve.run({ userId, month, allowance }).changes > 0,

    refund(userId: number, month: string): void {
      refund.run(userId, month);
    },
  };
}
export type CreditsRepo = ReturnType<typeof createCreditsRepo>;
