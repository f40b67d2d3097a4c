// A user's conversations as SPEC §7 answers them: query values -> time range -> indexed reads -> JSON.
import type { Conversation, ConversationsQuery, Filter } from '../../schemas/conversations';
import { AppError } from '../errors';
import { MESSAGES_PER_CONVERSATION, type ConversationsRepo, type ConversationSummary, type MessageQuery } from '../db/conversations-repo';
import { periodRange } from '../periods';
import { isoUtc } from './iso-utc';
import { messageJson } from './message-json';

/** Free-form messages are deliverable for this long after the contact's last message. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Messages one answer holds at most, so that one listing never holds the event loop for long. */
export const MESSAGES_PER_ANSWER = 5000;

export interface Filters { type?: string | undefined; filter?: Filter | undefined; contact?: string | undefined }

/** The message-level part of a query, with the period resolved at `now` in `timeZone`. */
export function messageQuery(userId: number, filters: Filters, now: Date, timeZone: string): MessageQuery {
  const range = periodRange(filters.filter ?? 'all', now, timeZone);
  return { userId, type: filters.type, contact: filters.contact, from: range.from, to: range.to };
}

export const serviceWindowExpiresAt = (lastInboundAt: number | null): number | null =>
  lastInboundAt === null ? null : lastInboundAt + SERVICE_WINDOW_MS;

/** Each summary with its latest matching messages and their status histories. */
export function withMessages(repo: ConversationsRepo, q: MessageQuery, summaries: ConversationSummary[]): Conversation[] {
  return summaries.map((s) => {
    const expires = serviceWindowExpiresAt(s.lastInboundAt);
    return {
      contact: { wa_id: s.contactWaId, name: s.contactName },
      last_message_at: isoUtc(s.lastAt),
      message_count: s.count,
      service_window_expires_at: expires === null ? null : isoUtc(expires),
      messages: repo.latestMessages(q, s.id).map(messageJson),
    };
  });
}

/**
 * The leading conversations whose shown messages fit in MESSAGES_PER_ANSWER (at least one: it shows at most 200).
 * A cut never falls between conversations with the same last time when it can be avoided (the next page asks
 * `before` that time, which would skip the rest of them): the page then ends before that group.
 */
export function withinMessageCap(summaries: ConversationSummary[]): ConversationSummary[] {
  let total = 0;
  let fit = summaries.findIndex((s) => (total += Math.min(s.count, MESSAGES_PER_CONVERSATION)) > MESSAGES_PER_ANSWER);
  if (fit < 0) return summaries;
  const tied = summaries[fit]!.lastAt;
  let group = fit;
  while (group > 0 && summaries[group - 1]!.lastAt === tied) group -= 1;
  // A group that starts the page cannot be avoided: then the page fills up to the cap.
  if (group > 0) fit = group;
  return summaries.slice(0, Math.max(1, fit));
}

/** GET /api/user/{id}/conversations: the page of conversations, newest first. */
export function listConversations(repo: ConversationsRepo, userId: number, query: ConversationsQuery, now: Date, timeZone: string): Conversation[] {
  const q = messageQuery(userId, query, now, timeZone);
  const before = query.before === undefined ? undefined : Date.parse(query.before);
  // The format check lets through what Date cannot hold, such as a leap second.
  if (Number.isNaN(before)) throw new AppError(400, 'VALIDATION_ERROR', 'querystring/before must be a representable date-time');
  return withMessages(repo, q, withinMessageCap(repo.page({ ...q, before, limit: query.limit })));
}
