// Epoch milliseconds -> ISO 8601 UTC strings, fast enough for answers with tens of thousands of them.
const DAY = 86_400_000;
const YEAR_10000 = 253_402_300_800_000;
let cachedDay = NaN;
let cachedPrefix = '';
const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * `new Date(ms).toISOString()`, several times faster: an answer carries up to 40,000 timestamps and
 * consecutive ones share their day, whose `YYYY-MM-DDT` is kept.
 */
export function isoUtc(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= YEAR_10000) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = new Date(day * DAY).toISOString().slice(0, 11);
  }
  const t = ms - day * DAY;
  return `${cachedPrefix}${pad(Math.floor(t / 3_600_000), 2)}:${pad(Math.floor(t / 60_000) % 60, 2)}:${pad(Math.floor(t / 1000) % 60, 2)}.${pad(t % 1000, 3)}Z`;
}
