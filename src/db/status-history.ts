// An outbound message's status history as messages.statuses_json holds it: [[status, at, error_json, pricing_json], …],
// oldest first by the network's time (ties in the order they came), each (status, at) once.
import { parseJsonOrUndefined } from '../support/loose-json';
import type { StoredStatus } from './listed-messages';

/** One entry of the history, as the repository returns it. */
export interface HistoryEntry { status: string; at: number; errorJson: string | null; pricingJson: string | null }

/** The stored history; an unreadable one (never written by us) counts as empty rather than failing the callback. */
function entries(stored: string | null): StoredStatus[] {
  const value = stored === null ? undefined : parseJsonOrUndefined(stored);
  return Array.isArray(value) ? (value as StoredStatus[]) : [];
}

/** The history `stored` with `entry` in its place, as JSON text; undefined when it already holds that (status, at). */
export function withEntry(stored: string | null, entry: StoredStatus): string | undefined {
  const list = entries(stored);
  const [status, at] = entry;
  if (list.some((e) => e[0] === status && e[1] === at)) return undefined;
  // After every entry at or before its time: a late callback goes back in its place, ties keep their arrival order.
  let place = list.length;
  while (place > 0 && list[place - 1]![1] > at) place -= 1;
  list.splice(place, 0, [status, at, entry[2] ?? null, entry[3] ?? null]);
  return JSON.stringify(list);
}

/** The history as entries, oldest first. */
export const historyEntries = (stored: string | null): HistoryEntry[] =>
  entries(stored).map(([status, at, errorJson, pricingJson]) => ({ status, at, errorJson, pricingJson: pricingJson ?? null }));
