// Calendar days and wall-clock labels in the configured IANA zone (credit months, periods, admin pages).

const DAY = 86_400_000;

// Building a formatter costs far more than using one: keep one per zone and options.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(locale: string, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale} ${timeZone} ${JSON.stringify(options)}`;
  let format = formatters.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone, ...options });
    formatters.set(key, format);
  }
  return format;
}

const NUMERIC: Intl.DateTimeFormatOptions = {
  hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
};

/** The wall clock at `instant` in `timeZone`, as if it were UTC (ms, whole seconds). */
export function wallClock(instant: number, timeZone: string): number {
  const parts = formatter('en-US', timeZone, NUMERIC).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/** `YYYY-MM-DD` of `ms` in `timeZone`: groups messages by calendar day. */
export const dayKey = (ms: number, timeZone: string) => new Date(wallClock(ms, timeZone)).toISOString().slice(0, 10);

// Every send asks for the month of "now": the answer only changes at a minute boundary (zone offsets are whole minutes).
let lastMonth = { minute: Number.NaN, timeZone: '', key: '' };

/** `YYYY-MM` of `date` in `timeZone`: the key credits are counted under. */
export function monthKey(date: Date, timeZone: string): string {
  const minute = Math.floor(date.getTime() / 60_000);
  if (minute !== lastMonth.minute || timeZone !== lastMonth.timeZone) {
    lastMonth = { minute, timeZone, key: dayKey(date.getTime(), timeZone).slice(0, 7) };
  }
  return lastMonth.key;
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

const label = (ms: number, timeZone: string, options: Intl.DateTimeFormatOptions) => formatter('en-GB', timeZone, options).format(ms);

/** `14:05` */
export const clockTime = (ms: number, timeZone: string) => label(ms, timeZone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** `Sat 21 Nov 2026, 14:05:09 (Europe/Lisbon)`: the full instant, for tooltips. */
export const fullTime = (ms: number, timeZone: string) => `${label(ms, timeZone, {
  weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
})} (${timeZone})`;

/** `Today`, `Yesterday`, or `Saturday, 21 November 2026`: the heading of a day of messages. */
export function dayHeading(ms: number, now: Date, timeZone: string): string {
  const day = dayKey(ms, timeZone);
  const today = dayKey(now.getTime(), timeZone);
  if (day === today) return 'Today';
  // Calendar arithmetic on the key, not now - 24 h: days around a DST change have 23 or 25 hours.
  const [year, month, date] = today.split('-').map(Number) as [number, number, number];
  if (day === new Date(Date.UTC(year, month - 1, date - 1)).toISOString().slice(0, 10)) return 'Yesterday';
  return label(ms, timeZone, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
}

/** A short "when" for lists: the time today, else the date (with the year when it is not this year). */
export function shortWhen(ms: number, now: Date, timeZone: string): string {
  const [day, today] = [dayKey(ms, timeZone), dayKey(now.getTime(), timeZone)];
  if (day === today) return clockTime(ms, timeZone);
  const sameYear = day.slice(0, 4) === today.slice(0, 4);
  return label(ms, timeZone, sameYear ? { day: 'numeric', month: 'short' } : { day: 'numeric', month: 'short', year: 'numeric' });
}

/** `14:05` today, else `23 Nov, 14:05`. */
export function whenWithTime(ms: number, now: Date, timeZone: string): string {
  const time = clockTime(ms, timeZone);
  return dayKey(ms, timeZone) === dayKey(now.getTime(), timeZone) ? time : `${shortWhen(ms, now, timeZone)}, ${time}`;
}
