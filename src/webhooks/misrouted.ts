// Callbacks for a phone number id no user has (usually a number not configured yet): which numbers they were for.
import type { WebhookEventsRepo } from '../db/webhook-events-repo';
import { parseJsonOrUndefined } from '../support/loose-json';

export interface Misrouted { id: number; receivedAt: number; state: string; phoneNumberIds: string[]; messages: number; statuses: number }

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const record = (value: unknown): Record<string, unknown> =>
  (value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : {});

/** The phone number ids of a callback's changes that carry messages or statuses, and how many of each. */
export function routedNumbers(payload: unknown): Omit<Misrouted, 'id' | 'receivedAt' | 'state'> {
  const numbers = new Set<string>();
  let messages = 0;
  let statuses = 0;
  for (const entry of list(record(payload).entry)) {
    for (const change of list(record(entry).changes)) {
      const value = record(record(change).value);
      const counted = list(value.messages).length + list(value.statuses).length;
      const id = record(value.metadata).phone_number_id;
      if (counted === 0 || typeof id !== 'string') continue;
      numbers.add(id);
      messages += list(value.messages).length;
      statuses += list(value.statuses).length;
    }
  }
  return { phoneNumberIds: [...numbers], messages, statuses };
}

/**
 * The latest processed callbacks that carried messages or statuses for numbers no user had when they came (scans at
 * most `scan` unrouted callbacks or `maxBytes` of them: those with nothing to route, e.g. account notices, are skipped).
 */
export function misroutedCallbacks(events: Pick<WebhookEventsRepo, 'unrouted'>, limit: number, scan = 500, maxBytes = 8 * 1024 * 1024): Misrouted[] {
  const found: Misrouted[] = [];
  let bytes = 0;
  // Failed and dead callbacks are listed (and replayed) as such: only processed ones come here.
  for (const event of events.unrouted(undefined, scan)) {
    // A page never reads more than a few megabytes of raw callbacks.
    bytes += event.rawBody.length;
    if (bytes > maxBytes) break;
    const numbers = routedNumbers(parseJsonOrUndefined(event.rawBody));
    if (numbers.phoneNumberIds.length > 0) found.push({ id: event.id, receivedAt: event.receivedAt, state: event.state, ...numbers });
    if (found.length >= limit) break;
  }
  return found;
}
