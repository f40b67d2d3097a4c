// Conversation filter periods (today, yesterday, …) as half-open UTC ms ranges, in the configured zone.

import type { Filter } from '../schemas/conversations';

/** [from, to): `from` inclusive, `to` exclusive, both ms since the epoch. */
export interface Range { from: number; to: number }

const DAY = 86_400_000;
// Beyond every stored time: Date's own limits.
export const ALL_TIME: Range = { from: -8.64e15, to: 8.64e15 };

// Building a formatter costs far more than using one: keep one per zone.
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock at `instant` in `timeZone`, as if it were UTC (ms, whole seconds). */
function wallClock(instant: number, timeZone: string): number {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

const offsetAt = (instant: number, timeZone: string) => wallClock(instant, timeZone) - Math.floor(instant / 1000) * 1000;
const dayOf = (instant: number, timeZone: string) => Math.floor(wallClock(instant, timeZone) / DAY);

/**
 * First instant of the calendar day `year-month-day` (month 1-12, day may overflow) in `timeZone`.
 * Around a DST change at midnight the day starts at the earliest instant that falls on it.
 */
export function startOfZonedDay(year: number, month: number, day: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  const candidates = [offsetAt(wall - DAY, timeZone), offsetAt(wall + DAY, timeZone)].map((offset) => wall - offset);
  const onThatDay = candidates.filter((t) => dayOf(t, timeZone) === wall / DAY);
  return Math.min(...(onThatDay.length > 0 ? onThatDay : candidates));
}

/** The range of `period` as seen at `now` on a wall clock in `timeZone`. Calendar days, not rolling hours. */
export function periodRange(period: Filter, now: Date, timeZone: string): Range {
  const today = new Date(wallClock(now.getTime(), timeZone));
  const [year, month, day] = [today.getUTCFullYear(), today.getUTCMonth() + 1, today.getUTCDate()];
  const dayStart = (offsetDays: number) => startOfZonedDay(year, month, day + offsetDays, timeZone);
  switch (period) {
    case 'today': return { from: dayStart(0), to: dayStart(1) };
    case 'yesterday': return { from: dayStart(-1), to: dayStart(0) };
    case 'last_7_days': return { from: dayStart(-6), to: dayStart(1) };
    case 'last_30_days': return { from: dayStart(-29), to: dayStart(1) };
    case 'this_month': return { from: startOfZonedDay(year, month, 1, timeZone), to: startOfZonedDay(year, month + 1, 1, timeZone) };
    case 'all': return ALL_TIME;
  }
}
