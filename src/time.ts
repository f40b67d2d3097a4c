// Calendar arithmetic in the configured IANA zone (credit months, "today" filters).

/** The parts of `date` as seen on a wall clock in `timeZone`. */
export function zonedParts(date: Date, timeZone: string): { year: number; month: number; day: number } {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day') };
}

/** `YYYY-MM` of `date` in `timeZone`: the key credits are counted under. */
export function monthKey(date: Date, timeZone: string): string {
  const { year, month } = zonedParts(date, timeZone);
  return `${year}-${String(month).padStart(2, '0')}`;
}
