// A user's conversations as SPEC §7 answers them: query values -> time range -> indexed reads -> UTF-8 JSON
// joined from each message's stored JSON (rendered when it was written), never parsed or serialised here.
import type { Conversation, ConversationsQuery, Filter } from '../../schemas/conversations';
import { AppError } from '../errors';
import { MESSAGES_PER_CONVERSATION, type ConversationsRepo, type ConversationSummary, type MessageQuery } from '../db/conversations-repo';
import { periodRange } from '../support/periods';
import { isoUtc } from '../support/iso-utc';

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

/** One conversation of the answer as UTF-8 JSON pieces: its fields, then its messages' stored JSON as they are. */
function conversationJson(repo: ConversationsRepo, q: MessageQuery, s: ConversationSummary): Buffer[] {
  const expires = serviceWindowExpiresAt(s.lastInboundAt);
  const head: Omit<Conversation, 'messages'> = {
    contact: { id: s.contactId, wa_id: s.contactWaId, user_id: s.contactBsuid, username: s.contactUsername, name: s.contactName },
    last_message_at: isoUtc(s.lastAt),
    message_count: s.count,
    service_window_expires_at: expires === null ? null : isoUtc(expires),
  };
  return [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"messages":[`), repo.latestMessagesJson(q, s), CLOSE];
}
const [OPEN, COMMA, CLOSE, END] = ['[', ',', ']}', ']'].map((text) => Buffer.from(text)) as [Buffer, Buffer, Buffer, Buffer];

/** A conversation with its latest matching messages as objects (the admin thread page). */
export function withMessages(repo: ConversationsRepo, q: MessageQuery, summary: ConversationSummary): Conversation {
  return JSON.parse(Buffer.concat(conversationJson(repo, q, summary)).toString()) as Conversation;
}

/** GET /api/user/{id}/conversations: the page of conversations, newest first, as the UTF-8 JSON of the answer. */
export function listConversationsJson(repo: ConversationsRepo, userId: number, query: ConversationsQuery, now: Date, timeZone: string): Buffer {
  return Buffer.concat(listConversationsPieces(repo, userId, query, now, timeZone));
}

/** The same answer in the pieces it is joined from (a caller with its own buffer copies them there). */
export function listConversationsPieces(repo: ConversationsRepo, userId: number, query: ConversationsQuery, now: Date, timeZone: string): Buffer[] {
  const q = messageQuery(userId, query, now, timeZone);
  const before = query.before === undefined ? undefined : Date.parse(query.before);
  // The format check lets through what Date cannot hold, such as a leap second.
  if (Number.isNaN(before)) throw new AppError(400, 'VALIDATION_ERROR', 'querystring/before must be a representable date-time');
  const pieces = [OPEN];
  withinMessageCap(repo.page({ ...q, before, limit: query.limit })).forEach((s, i) => {
    if (i > 0) pieces.push(COMMA);
    pieces.push(...conversationJson(repo, q, s));
  });
  pieces.push(END);
  return pieces;
}
