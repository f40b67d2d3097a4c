// A user's conversations as SPEC §7 answers them: query values -> time range -> indexed reads -> JSON.
import type { Conversation, ConversationsQuery, Filter } from '../../schemas/conversations';
import { AppError } from '../errors';
import type { ConversationsRepo, ConversationSummary, MessageQuery } from '../db/conversations-repo';
import { periodRange } from '../periods';
import { isoUtc } from './iso-utc';
import { messageJson } from './message-json';

/** Free-form messages are deliverable for this long after the contact's last message. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

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

/** GET /api/user/{id}/conversations: the page of conversations, newest first. */
export function listConversations(repo: ConversationsRepo, userId: number, query: ConversationsQuery, now: Date, timeZone: string): Conversation[] {
  const q = messageQuery(userId, query, now, timeZone);
  const before = query.before === undefined ? undefined : Date.parse(query.before);
  // The format check lets through what Date cannot hold, such as a leap second.
  if (Number.isNaN(before)) throw new AppError(400, 'VALIDATION_ERROR', 'querystring/before must be a representable date-time');
  return withMessages(repo, q, repo.page({ ...q, before, limit: query.limit }));
}
