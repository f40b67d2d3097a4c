// Queued and scheduled sends: the message is validated, its credit reserved and the row stored `queued` (or
// `scheduled`, with its send_at) in one write, and the queue worker sends it later at the number's rate. Cancelling a
// waiting message refunds it; an Idempotency-Key of a queued send replays its 202.
import type { ContactResolver } from '../contacts/resolve';
import { contactOfSend } from './send-recipient';
import { createHash } from 'node:crypto';
import type { Message } from '../../schemas/conversations';
import type { CreditsRepo } from '../db/credits-repo';
import type { IdempotencyRepo } from '../db/idempotency-repo';
import type { MessagesRepo } from '../db/messages-repo';
import type { QueueRepo } from '../db/queue-repo';
import type { MessageRow, UserRow } from '../db/tables';
import type { Writer } from '../db/writer';
import { AppError } from '../errors';
import { wireBody, type OutboundMessage } from '../messaging/client';
import { monthKey } from '../support/time';
import { SERVICE_WINDOW_MS } from './conversations';
import { storedFields } from './outbound-message';
import { accountOf, type SendDeps } from './send-message';

/** How far ahead a send_at may be. */
export const MAX_AHEAD_MS = 30 * 24 * 3600 * 1000;

export interface QueueDeps {
  writer: Writer;
  messages: Pick<MessagesRepo, 'insertOutbound' | 'findById'>;
  contacts: Pick<ContactResolver, 'resolve'>;
  queue: QueueRepo;
  credits: CreditsRepo;
  idempotency: IdempotencyRepo;
  timezone: string;
  now: () => Date;
  openToken: SendDeps['openToken'];
  /** Tells the worker that `userId` has a new waiting message. */
  wake: (userId: number) => void;
}

export interface QueueTimes { send_at?: string; expires_at?: string }

/** The 202 body: the message as listed (status queued or scheduled), with its times and this month's credits left. */
export type QueuedAnswer = Message & { send_at: string; expires_at: string | null; credits_remaining: number };
export interface QueueOutcome { answer: QueuedAnswer; replayed: boolean }

const invalid = (message: string) => new AppError(400, 'VALIDATION_ERROR', message);

function instant(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw invalid(`${field} must be an ISO 8601 date-time`);
  return at;
}

/** When it is due and whether it is scheduled; 400 for a send_at beyond 30 days or an expiry not after it. */
export function queueTimes(times: QueueTimes, now: number, where = 'body') {
  const sendAt = instant(times.send_at, `${where}/send_at`);
  const expiresAt = instant(times.expires_at, `${where}/expires_at`) ?? null;
  if (sendAt !== undefined && sendAt > now + MAX_AHEAD_MS) throw invalid(`${where}/send_at must be at most 30 days ahead`);
  const dueAt = sendAt !== undefined && sendAt > now ? sendAt : now;
  if (expiresAt !== null && expiresAt <= dueAt) throw invalid(`${where}/expires_at must be after ${sendAt !== undefined && sendAt > now ? 'send_at' : 'now'}`);
  return { dueAt, expiresAt, status: dueAt > now ? 'scheduled' as const : 'queued' as const };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The message as listed, plus its queue times and the credits left. */
function answerOf(row: MessageRow, creditsRemaining: number): QueuedAnswer {
  const listed = JSON.parse(row.listedJson ?? '{}') as Message;
  return { ...listed, id: row.id, status: row.status as Message['status'], send_at: iso(row.sendAt ?? row.createdAt)!, expires_at: iso(row.expiresAt), credits_remaining: creditsRemaining };
}

/** Queues one message of `user`; throws the request's AppError (400, 402, 409, 422) with nothing stored. */
export async function queueMessage(deps: QueueDeps, user: UserRow, message: OutboundMessage, times: QueueTimes,
  idempotencyKey?: string, where = 'body', contactId?: number): Promise<QueueOutcome> {
  accountOf(user, deps.openToken);
  const now = deps.now().getTime();
  const { dueAt, expiresAt, status } = queueTimes(times, now, where);
  const month = monthKey(new Date(now), deps.timezone);
  const hash = idempotencyKey === undefined ? ''
    : createHash('sha256').update(JSON.stringify({ queued: message, send_at: times.send_at ?? null, expires_at: times.expires_at ?? null })).digest('hex');
  const outcome = await deps.writer.write((): QueueOutcome => {
    if (idempotencyKey !== undefined) {
      const claim = deps.idempotency.claim(user.id, idempotencyKey, hash, now);
      if (claim.kind === 'replay') return { answer: JSON.parse(claim.body) as QueuedAnswer, replayed: true };
      if (claim.kind === 'mismatch') throw new AppError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request');
      if (claim.kind === 'in_flight') {
        throw new AppError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry shortly', undefined, { 'retry-after': '1' });
      }
    }
    if (!deps.credits.reserve(user.id, month, user.monthlyCredits)) {
      throw new AppError(402, 'CREDITS_EXHAUSTED', `The monthly allowance of ${user.monthlyCredits} credits is used up`);
    }
    const id = deps.messages.insertOutbound({
      userId: user.id, contact: contactOfSend(deps.contacts, user.id, message, now, contactId), to: message.to, type: message.kind, createdAt: now, ...storedFields(message), payloadJson: JSON.stringify(wireBody(message)),
    }, { status, sendAt: dueAt, expiresAt, replyWindowStart: now - SERVICE_WINDOW_MS });
    const answer = answerOf(deps.messages.findById(id)!, Math.max(0, user.monthlyCredits - deps.credits.used(user.id, month)));
    if (idempotencyKey !== undefined) {
      deps.idempotency.bind(user.id, idempotencyKey, id);
      deps.idempotency.complete(user.id, idempotencyKey, 202, JSON.stringify(answer));
    }
    return { answer, replayed: false };
  });
  if (!outcome.replayed) deps.wake(user.id);
  return outcome;
}

const CANCELLED = JSON.stringify({ code: 'CANCELLED', title: 'Cancelled before it was sent', details: 'Its credit was refunded.' });

/** Cancels a queued or scheduled message of `user`: refunded, `failed` with error CANCELLED; 404 / 409 otherwise. */
export async function cancelQueued(deps: QueueDeps, user: UserRow, id: number): Promise<Message> {
  const at = deps.now().getTime();
  const result = await deps.writer.write(() => {
    const moved = deps.queue.cancel(user.id, id, CANCELLED, at);
    if (typeof moved === 'object') deps.credits.refund(user.id, monthKey(new Date(moved.createdAt), deps.timezone));
    return moved;
  });
  if (result === undefined) throw new AppError(404, 'MESSAGE_NOT_FOUND', `No outbound message ${id} of yours`);
  if (typeof result === 'string') {
    throw new AppError(409, 'MESSAGE_NOT_QUEUED', `Message ${id} is ${result === 'pending' ? 'being sent' : result}: only a queued or scheduled message can be cancelled`);
  }
  return JSON.parse(deps.messages.findById(id)!.listedJson ?? '{}') as Message;
}
