// Sending one message (SPEC §5): reserve a credit and store it, call the network outside any transaction, settle.
import { createHash } from 'node:crypto';
import type { CreditsRepo } from '../db/credits-repo';
import type { IdempotencyRepo } from '../db/idempotency-repo';
import type { MessagesRepo } from '../db/messages-repo';
import type { UserRow } from '../db/tables';
import type { Writer } from '../db/writer';
import { AppError } from '../errors';
import { wireBody, type MessagingAccount, type MessagingClient, type OutboundMessage } from '../messaging/client';
import { monthKey } from '../time';
import { failureError, failureRecord } from './send-failures';

const KEY_TTL_MS = 24 * 3600 * 1000;
/** An in-flight key older than one whole send plus this margin belongs to a crashed request. */
const ABANDON_MARGIN_MS = 60_000;

export interface SendDeps {
  writer: Writer;
  messages: MessagesRepo;
  credits: CreditsRepo;
  idempotency: IdempotencyRepo;
  client: MessagingClient;
  timezone: string;
  now: () => Date;
  /** Opens a user's sealed messaging token; undefined when the current key cannot. */
  openToken: (sealed: string, userId: number) => string | undefined;
}

export interface SendAnswer {
  id: number; wamid: string; to: string; type: 'text' | 'template'; status: 'accepted';
  credits_remaining: number; created_at: string;
}
export interface SendOutcome { answer: SendAnswer; replayed: boolean }

function accountOf(user: UserRow, openToken: SendDeps['openToken']): MessagingAccount {
  if (!user.messagingToken || !user.messagingPhoneNumberId) {
    throw new AppError(409, 'MESSAGING_NOT_CONFIGURED', 'Messaging is not configured for this account (token and phone number id); ask an administrator');
  }
  const token = openToken(user.messagingToken, user.id);
  if (token === undefined) {
    // The encryption key changed since the token was stored: only setting it again (or the old key) helps.
    throw new AppError(409, 'MESSAGING_NOT_CONFIGURED', 'The messaging token stored for this account cannot be read with the current encryption key; ask an administrator to set it again');
  }
  return { phoneNumberId: user.messagingPhoneNumberId, token };
}

/** Same message, same fingerprint: the normalised message is built in a fixed key order. */
const fingerprint = (message: OutboundMessage) => createHash('sha256').update(JSON.stringify(message)).digest('hex');

const keyErrors = {
  mismatch: () => new AppError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request'),
  in_flight: () => new AppError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry shortly',
    undefined, { 'retry-after': '1' }),
};

export async function sendMessage(deps: SendDeps, user: UserRow, message: OutboundMessage, idempotencyKey?: string): Promise<SendOutcome> {
  const account = accountOf(user, deps.openToken);
  const startedAt = deps.now().getTime();
  // The credit is taken from, and given back to, the month of the request.
  const month = monthKey(new Date(startedAt), deps.timezone);
  const hash = idempotencyKey === undefined ? '' : fingerprint(message);

  const claimed = await deps.writer.write(() => {
    if (idempotencyKey !== undefined) {
      const claim = deps.idempotency.claim(user.id, idempotencyKey, hash, startedAt, {
        expiredBefore: startedAt - KEY_TTL_MS, abandonedBefore: startedAt - deps.client.budgetMs - ABANDON_MARGIN_MS,
      });
      if (claim.kind !== 'claimed') return claim;
    }
    if (!deps.credits.reserve(user.id, month, user.monthlyCredits)) {
      // Thrown inside the transaction: the key claim above is rolled back with it.
      throw new AppError(402, 'CREDITS_EXHAUSTED', `The monthly allowance of ${user.monthlyCredits} credits is used up`);
    }
    const id = deps.messages.insertOutbound({
      userId: user.id, to: message.to, type: message.kind, createdAt: startedAt,
      text: message.kind === 'text' ? message.body : null,
      templateJson: message.kind === 'template'
        ? JSON.stringify({ name: message.name, language: message.language, params: message.params }) : null,
      payloadJson: JSON.stringify(wireBody(message)),
    });
    return { kind: 'claimed' as const, id };
  });
  if (claimed.kind === 'replay') return { answer: JSON.parse(claimed.body) as SendAnswer, replayed: true };
  if (claimed.kind !== 'claimed') throw keyErrors[claimed.kind]();

  const result = await deps.client.send(account, message);
  const settledAt = deps.now().getTime();
  const { id } = claimed;

  if (result.kind !== 'accepted') {
    await deps.writer.write(() => {
      deps.messages.markFailed(id, failureRecord(result), settledAt);
      deps.credits.refund(user.id, month);
      if (idempotencyKey !== undefined) deps.idempotency.release(user.id, idempotencyKey);
    });
    throw failureError(result);
  }
  return deps.writer.write(() => {
    deps.messages.markAccepted(id, result.wamid, result.waId, settledAt);
    const answer: SendAnswer = {
      id, wamid: result.wamid, to: message.to, type: message.kind, status: 'accepted',
      credits_remaining: Math.max(0, user.monthlyCredits - deps.credits.used(user.id, month)),
      created_at: new Date(startedAt).toISOString(),
    };
    if (idempotencyKey !== undefined) deps.idempotency.complete(user.id, idempotencyKey, 201, JSON.stringify(answer));
    return { answer, replayed: false };
  });
}
