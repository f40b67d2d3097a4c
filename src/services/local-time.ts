// Times as people read them on the admin pages: wall-clock labels in the configured zone.
const formatters = new Map<string, Intl.DateTimeFormat>();

function format(zone: string, options: Intl.DateTimeFormatOptions, ms: number): string {
  const key = zone + JSON.stringify(options);
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', { timeZone: zone, ...options });
    formatters.set(key, formatter);
  }
  return formatter.format(ms);
}

/** `YYYY-MM-DD` of `ms` in `zone`: groups messages by calendar day. */
export const dayKey = (ms: number, zone: string) => format(zone, { year: 'numeric', month: '2-digit', day: '2-digit' }, ms)
  .split('/').reverse().join('-');

/** `14:05` */
export const clockTime = (ms: number, zone: string) => format(zone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }, ms);

/** `Sat 21 Nov 2026, 14:05:09 (Europe/Lisbon)`: the full instant, for tooltips. */
export const fullTime = (ms: number, zone: string) => `${format(zone, {
  weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
}, ms)} (${zone})`;

/** `Today`, `Yesterday`, or `Saturday, 21 November 2026`: the heading of a day of messages. */
export function dayHeading(ms: number, now: Date, zone: string): string {
  const day = dayKey(ms, zone);
  if (day === dayKey(now.getTime(), zone)) return 'Today';
  // Calendar arithmetic on the key, not now - 24 h: days around a DST change have 23 or 25 hours.
  const [year, month, date] = dayKey(now.getTime(), zone).split('-').map(Number) as [number, number, number];
  if (day === new Date(Date.UTC(year, month - 1, date - 1)).toISOString().slice(0, 10)) return 'Yesterday';
  return format(zone, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }, ms);
}

/** `14:05` today, else `23 Nov, 14:05`. */
export function whenWithTime(ms: number, now: Date, zone: string): string {
  const time = clockTime(ms, zone);
  return dayKey(ms, zone) === dayKey(now.getTime(), zone) ? time : `${shortWhen(ms, now, zone)}, ${time}`;
}

/** A short "when" for lists: the time today, else the date (with the year when it is not this year). */
export function shortWhen(ms: number, now: Date, zone: string): string {
  if (dayKey(ms, zone) === dayKey(now.getTime(), zone)) return clockTime(ms, zone);
  const sameYear = dayKey(ms, zone).slice(0, 4) === dayKey(now.getTime(), zone).slice(0, 4);
  return format(zone, sameYear ? { day: 'numeric', month: 'short' } : { day: 'numeric', month: 'short', year: 'numeric' }, ms);
}
