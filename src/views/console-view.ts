// Page models of the console: a users-list row, a user's usage as table rows, audit rows, callbacks to replay.
import type { AuditEntry, Usage } from '../../schemas/console';
import type { User } from '../../schemas/users';
import type { EventSummary } from '../db/webhook-events-repo';
import { fullTime, shortWhen, whenWithTime } from '../support/time';
import type { Misrouted } from '../webhooks/misrouted';
import { detailsText } from './audit-view';

/** A time shown short, with the full instant as its tooltip. */
export interface When { text: string; title: string; iso: string }
export const when = (ms: number, now: Date, zone: string): When => ({ text: whenWithTime(ms, now, zone), title: fullTime(ms, zone), iso: new Date(ms).toISOString() });

export function userListRow(user: User, lastActivity: number | null, now: Date, zone: string) {
  return {
    ...user,
    lastActivity: lastActivity === null ? null : { text: shortWhen(lastActivity, now, zone), title: fullTime(lastActivity, zone) },
  };
}

const OUTCOME_LABELS: Record<keyof Usage['sends']['by_status'], string> = {
  pending: 'Pending (not answered yet)', accepted: 'Accepted by the network', sent: 'Sent', delivered: 'Delivered', read: 'Read', failed: 'Failed',
};

/** The usage answer as the usage section shows it. */
export function usageView(usage: Usage, links: { previous: string; next: string | null }) {
  return {
    ...usage,
    links,
    share: usage.monthly_credits > 0 ? Math.min(100, Math.round((usage.credits_used / usage.monthly_credits) * 100)) : (usage.credits_used > 0 ? 100 : 0),
    outcomes: (Object.keys(OUTCOME_LABELS) as (keyof typeof OUTCOME_LABELS)[]).map((key) => ({ key, label: OUTCOME_LABELS[key], count: usage.sends.by_status[key] })),
  };
}

export function auditRow(entry: AuditEntry, now: Date, zone: string) {
  return { ...entry, when: when(Date.parse(entry.at), now, zone), text: detailsText(entry.details) };
}

export function failedCallbackRow(event: EventSummary, now: Date, zone: string) {
  return { ...event, received: when(event.receivedAt, now, zone), processed: event.processedAt === null ? null : when(event.processedAt, now, zone) };
}

/** `ownerOf` tells the user a number belongs to now (configured since the callback came): Replay applies it there. */
export function misroutedRow(event: Misrouted, now: Date, zone: string, ownerOf: (phoneNumberId: string) => { id: number; email: string } | undefined) {
  const owners = event.phoneNumberIds.map(ownerOf).filter((owner) => owner !== undefined).map((owner) => ({ id: owner.id, email: owner.email }));
  return { ...event, received: when(event.receivedAt, now, zone), owners };
}
