// Conversation filter periods (today, yesterday, …) as half-open UTC ms ranges, in the configured zone.
import type { Filter } from '../../schemas/conversations';
import { startOfZonedDay, wallClock } from './time';

/** [from, to): `from` inclusive, `to` exclusive, both ms since the epoch. */
export interface Range { from: number; to: number }

// Beyond every stored time: Date's own limits.
const ALL_TIME: Range = { from: -8.64e15, to: 8.64e15 };

/** The range of `period` as seen at `now` on a wall clock in `timeZone`. Calendar days, not rolling hours. */
export function periodRange(period: Filter, now: Date, timeZone: string): Range {
  // The default filter needs no calendar (reading the zone's wall clock is the costly part).
  if (period === 'all') return ALL_TIME;
  const today = new Date(wallClock(now.getTime(), timeZone));
  const [year, month, day] = [today.getUTCFullYear(), today.getUTCMonth() + 1, today.getUTCDate()];
  const dayStart = (offsetDays: number) => startOfZonedDay(year, month, day + offsetDays, timeZone);
  switch (period) {
    case 'today': return { from: dayStart(0), to: dayStart(1) };
    case 'yesterday': return { from: dayStart(-1), to: dayStart(0) };
    case 'last_7_days': return { from: dayStart(-6), to: dayStart(1) };
    case 'last_30_days': return { from: dayStart(-29), to: dayStart(1) };
    case 'this_month': return { from: startOfZonedDay(year, month, 1, timeZone), to: startOfZonedDay(year, month + 1, 1, timeZone) };
  }
}
