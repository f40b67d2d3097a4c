// The admin thread page's model: filter links, the contact list, the chosen conversation as days of
// bubbles, and an empty state that says what is going on. Built from the same reads as the JSON API.
import { FILTERS, MESSAGE_TYPES, type Filter } from '../../schemas/conversations';
import { MESSAGES_PER_CONVERSATION, type ConversationsRepo } from '../db/conversations-repo';
import type { UserRow } from '../db/tables';
import { dayHeading, dayKey, fullTime, shortWhen, whenWithTime } from '../support/time';
import { bubble, type Bubble } from './bubble-view';
import { contactIdentifiers, contactKey, contactLabel } from './contact-label';
import { messageQuery, serviceWindowExpiresAt, withMessages, type Filters } from '../services/conversations';

export const PERIOD_LABELS: Record<Filter, string> = {
  all: 'All time', today: 'Today', yesterday: 'Yesterday', last_7_days: 'Last 7 days', last_30_days: 'Last 30 days', this_month: 'This month',
};
const CONTACTS_SHOWN = 200;

interface Link { label: string; href: string; active: boolean }
export interface ThreadPage {
  user: UserRow;
  /** This page with its conversation pinned: what the live script re-reads when an event arrives. */
  selfHref: string;
  periods: Link[]; types: Link[]; filtered: boolean; clearHref: string;
  contacts: { name: string; detail: string; initial: string; when: string; title: string; count: number; href: string; active: boolean }[];
  contactsCapped: boolean;
  thread: null | {
    name: string; identifiers: string[]; count: number; shown: number; contactId: number;
    /** `leftMs`: how long the 24 h service window stays open from now (0 when closed or never opened). */
    window: { open: boolean; label: string; leftMs: number };
    days: { heading: string; bubbles: Bubble[] }[];
  };
  empty: null | { title: string; text: string };
}

export function threadHref(userId: number, filters: Filters): string {
  const query = new URLSearchParams();
  if (filters.contact) query.set('contact', filters.contact);
  if (filters.type) query.set('type', filters.type);
  if (filters.filter && filters.filter !== 'all') query.set('filter', filters.filter);
  const search = query.toString();
  return `/admin/user/${userId}/conversation-thread${search ? '?' + search : ''}`;
}

function windowLabel(lastInboundAt: number | null, now: Date, zone: string): { open: boolean; label: string; leftMs: number } {
  const expires = serviceWindowExpiresAt(lastInboundAt);
  if (expires === null) return { open: false, label: 'No message from this contact yet: only templates can be sent', leftMs: 0 };
  const when = whenWithTime(expires, now, zone);
  return expires > now.getTime()
    ? { open: true, label: `Service window open until ${when}`, leftMs: expires - now.getTime() }
    : { open: false, label: `Service window closed ${when}: only templates can be sent`, leftMs: 0 };
}

/** The reply box under a user's own conversation: free text while the window is open, else a template; one credit each. */
export function replyBox(window: { open: boolean; leftMs: number }, creditsLeft: number) {
  return {
    mode: window.open ? 'text' : 'template', leftMs: window.leftMs, creditsLeft,
    windowText: window.open ? `Free text: the service window is open, ${timeLeft(window.leftMs)}` : 'The service window is closed: send an approved template',
    costText: `Costs 1 credit · ${creditsLeft} ${creditsLeft === 1 ? 'credit' : 'credits'} left this month`,
  };
}

/** "23 h 05 min left", "9 min left": the time a service window stays open, to the minute (rounded up, as the reply box's
 * script counts it down: it says the same right after the page loads). */
export function timeLeft(ms: number): string {
  const minutes = Math.ceil(ms / 60_000);
  const h = Math.floor(minutes / 60);
  return h > 0 ? `${h} h ${String(minutes % 60).padStart(2, '0')} min left` : `${minutes} min left`;
}

function emptyState(page: Omit<ThreadPage, 'empty'>, filters: Filters): ThreadPage['empty'] {
  if (page.thread) return null;
  const what = `${filters.type ? `${filters.type} messages` : 'messages'} ${PERIOD_LABELS[filters.filter ?? 'all'].toLowerCase()}`;
  if (filters.contact) return { title: `Nothing with ${/^[0-9]+$/.test(filters.contact) ? '+' : ''}${filters.contact}`, text: `There are no ${what} with this contact.` };
  if (page.filtered) return { title: 'Nothing matches these filters', text: `This user has no ${what}.` };
  const number = page.user.messagingPhoneNumberId;
  return number
    ? { title: 'No conversations yet', text: `Messages this user sends, and messages that arrive on its number (phone number id ${number}), will appear here.` }
    : { title: 'No conversations yet', text: 'This user has no messaging number configured, so it can neither send nor receive messages.' };
}

export function threadPage(repo: ConversationsRepo, user: UserRow, filters: Filters, now: Date, zone: string): ThreadPage {
  const { contact, ...listFilters } = filters;
  const listQuery = messageQuery(user.id, listFilters, now, zone);
  const summaries = repo.page({ ...listQuery, limit: CONTACTS_SHOWN });
  const first = summaries[0];
  const selected = contact ?? (first === undefined ? undefined : contactKey(first));
  const href = (changes: Filters) => threadHref(user.id, { ...filters, contact: selected, ...changes });

  let thread: ThreadPage['thread'] = null;
  if (selected !== undefined) {
    const query = { ...listQuery, contact: selected };
    const [summary] = repo.page({ ...query, limit: 1 });
    const conversation = summary ? withMessages(repo, query, summary) : undefined;
    if (summary && conversation) {
      const texts = new Map(conversation.messages.map((m) => [m.wamid, m.text ?? m.type]));
      const days = new Map<string, { heading: string; bubbles: Bubble[] }>();
      for (const m of conversation.messages) {
        const at = Date.parse(m.created_at);
        const key = dayKey(at, zone);
        if (!days.has(key)) days.set(key, { heading: dayHeading(at, now, zone), bubbles: [] });
        days.get(key)!.bubbles.push(bubble(m, zone, (wamid) => texts.get(wamid) ?? null));
      }
      thread = {
        name: contactLabel(summary), contactId: summary.contactId, identifiers: contactIdentifiers(summary).filter((id) => id !== contactLabel(summary)), count: summary.count,
        shown: Math.min(summary.count, MESSAGES_PER_CONVERSATION), window: windowLabel(summary.lastInboundAt, now, zone), days: [...days.values()],
      };
    }
  }

  const page = {
    user,
    selfHref: href({}),
    periods: FILTERS.map((f) => ({ label: PERIOD_LABELS[f], href: href({ filter: f }), active: (filters.filter ?? 'all') === f })),
    types: [undefined, ...MESSAGE_TYPES].map((type) => ({ label: type ?? 'All types', href: href({ type }), active: filters.type === type })),
    filtered: filters.type !== undefined || (filters.filter ?? 'all') !== 'all',
    clearHref: threadHref(user.id, {}),
    contacts: summaries.map((s) => ({
      name: contactLabel(s), detail: contactIdentifiers(s).filter((id) => id !== contactLabel(s))[0] ?? '',
      initial: [...(s.contactName ?? s.contactUsername?.replace(/^@/, '') ?? '#').trim()][0]?.toUpperCase() ?? '#',
      when: shortWhen(s.lastAt, now, zone), title: fullTime(s.lastAt, zone), count: s.count,
      href: threadHref(user.id, { ...filters, contact: contactKey(s) }),
      active: selected !== undefined && [contactKey(s), `id:${s.contactId}`, s.contactBsuid].includes(selected),
    })),
    contactsCapped: summaries.length === CONTACTS_SHOWN,
    thread,
  };
  return { ...page, empty: emptyState(page, filters) };
}
