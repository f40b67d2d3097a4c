// A user's usage in one calendar month (in TIMEZONE): credits, sends by outcome and error code, pricing categories.
import { SEND_OUTCOMES, type Usage } from '../../schemas/console';
import type { CreditsRepo } from '../db/credits-repo';
import type { UserRow } from '../db/tables';
import type { UsageRepo } from '../db/usage-repo';
import { isoUtc } from '../support/iso-utc';
import { startOfZonedDay } from '../support/time';

export interface UsageDeps { usage: UsageRepo; credits: Pick<CreditsRepo, 'used'> }

/** The first instant of `month` (YYYY-MM) in `timeZone` and the first instant after it. */
export function monthRange(month: string, timeZone: string): { from: number; to: number } {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return { from: startOfZonedDay(year, number, 1, timeZone), to: startOfZonedDay(year, number + 1, 1, timeZone) };
}

/** The month before and after `month` (YYYY-MM), for paging the usage page. */
export function neighbourMonths(month: string): { previous: string; next: string } {
  const [year, number] = month.split('-').map(Number) as [number, number];
  const key = (offset: number) => new Date(Date.UTC(year, number - 1 + offset, 1)).toISOString().slice(0, 7);
  return { previous: key(-1), next: key(1) };
}

export function monthUsage(deps: UsageDeps, user: UserRow, month: string, timeZone: string): Usage {
  const { from, to } = monthRange(month, timeZone);
  const sends = deps.usage.sends(user.id, from, to);
  const byStatus = Object.fromEntries(SEND_OUTCOMES.map((status) => [status, sends.byStatus[status] ?? 0])) as Usage['sends']['by_status'];
  const used = deps.credits.used(user.id, month);
  return {
    user_id: user.id, month, timezone: timeZone, from: isoUtc(from), to: isoUtc(to),
    monthly_credits: user.monthlyCredits, credits_used: used, credits_remaining: Math.max(0, user.monthlyCredits - used),
    sends: {
      total: Object.values(sends.byStatus).reduce((sum, n) => sum + n, 0),
      by_status: byStatus,
      by_error_code: sends.byErrorCode,
    },
    pricing: deps.usage.pricingCategories(user.id, from, to),
  };
}
