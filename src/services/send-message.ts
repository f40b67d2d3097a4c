// Sending one message (SPEC §5): reserve a credit and store it, call the network outside any transaction, settle.
import { createHash } from 'node:crypto';
import type { ContactResolver } from '../contacts/resolve';
import type { CreditsRepo } from '../db/credits-repo';
import type { IdempotencyRepo } from '../db/idempotency-repo';
import type { ContactRef, MessagesRepo } from '../db/messages-repo';
import type { UserRow } from '../db/tables';
import type { Writer } from '../db/writer';
import { AppError, asStorageError } from '../errors';
import { wireBody, type MessagingAccount, type MessagingClient, type OutboundMessage } from '../messaging/client';
import type { Pacer } from '../messaging/pacer';
import { monthKey } from '../support/time';
import { storedFields } from './outbound-message';
import { failureError, failureRecord, keptFailure, outcomeUnknown, replayedFailure, sentButNotStored } from './send-failures';
import { contactAnswered, contactOfSend } from './send-recipient';
import type { SendTracker } from './send-tracker';

/** How long a request waits for storage to take the network's acceptance before answering 503 (then it retries in the background). */
const STORAGE_WAIT_MS = 10_000;

/** A number's turn at its rate, from the pacer the queue worker shares: `at`, the first attempt's slot, and `retry`,
 * a slot for each further one (the network thread waits for it, and for room in the past second). */
export type SendTurns = Pick<Pacer, 'turn'>;

export interface SendDeps {
  writer: Writer;
  messages: MessagesRepo;
  credits: CreditsRepo;
  idempotency: IdempotencyRepo;
  client: MessagingClient;
  /** Finds (or creates) the contact of the recipient as sent and as the network answered it. */
  contacts: Pick<ContactResolver, 'resolve'>;
  /** This process's sends in flight, and settle writes retried while storage refuses them. */
  tracker: SendTracker;
  /** Tests shorten the wait for storage before the 503 (default 10 s). */
  storageWaitMs?: number;
  timezone: string;
  now: () => Date;
  /** Opens a user's sealed messaging token; undefined when the current key cannot. */
  openToken: (sealed: string, userId: number) => string | undefined;
  /** Paces the network calls of each phone number id; a send waits its turn at most `sendWaitMs`. */
  pacer: SendTurns;
  sendWaitMs: number;
}

export interface SendAnswer {
  id: number; wamid: string; to: string; type: OutboundMessage['kind']; status: 'accepted';
  credits_remaining: number; created_at: string; contact_id: number;
}

const sentTo = (deps: SendDeps, userId: number, message: OutboundMessage, at: number, contactId?: number): ContactRef =>
  contactOfSend(deps.contacts, userId, message, at, contactId);
export interface SendOutcome { answer: SendAnswer; replayed: boolean }

export function accountOf(user: UserRow, openToken: SendDeps['openToken']): MessagingAccount {
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

/** `contactId`: the caller's contact the message was addressed to (a `contact_id` send). */
export async function sendMessage(
  deps: SendDeps, user: UserRow, message: OutboundMessage, idempotencyKey?: string, contactId?: number,
): Promise<SendOutcome> {
  const account = accountOf(user, deps.openToken);
  // The number's turn at its rate, or 429 SEND_QUEUE_FULL before anything is stored or charged.
  const turn = deps.pacer.turn(account.phoneNumberId, user.messagingRate, deps.sendWaitMs);
  const startedAt = deps.now().getTime();
  // The credit is taken from, and given back to, the month of the request.
  const month = monthKey(new Date(startedAt), deps.timezone);
  const hash = idempotencyKey === undefined ? '' : fingerprint(message);

  let reservedId: number | undefined;
  const claimed = await deps.writer.write(() => {
    if (idempotencyKey !== undefined) {
      const claim = deps.idempotency.claim(user.id, idempotencyKey, hash, startedAt);
      if (claim.kind !== 'claimed') return claim;
    }
    if (!deps.credits.reserve(user.id, month, user.monthlyCredits)) {
      // Thrown inside the transaction: the key claim above is rolled back with it.
      throw new AppError(402, 'CREDITS_EXHAUSTED', `The monthly allowance of ${user.monthlyCredits} credits is used up`);
    }
    const id = deps.messages.insertOutbound({
      userId: user.id, contact: sentTo(deps, user.id, message, startedAt, contactId), to: message.to, type: message.kind, createdAt: startedAt,
      ...storedFields(message),
      payloadJson: JSON.stringify(wireBody(message)),
    });
    // The key stays bound to this message: a repeat can always name it, and never sends again.
    if (idempotencyKey !== undefined) deps.idempotency.bind(user.id, idempotencyKey, id);
    // Tracked from the moment it is visible, so no repeat or settle job sees it untracked while this process owns it.
    deps.tracker.begin(id);
    reservedId = id;
    return { kind: 'claimed' as const, id };
  }).catch((error: unknown) => {
    // The batch did not commit: the message does not exist.
    if (reservedId !== undefined) deps.tracker.end(reservedId);
    throw error;
  });
  if (claimed.kind === 'replay') {
    // Whatever the first answer was once the network was called: a refusal, a throttle or a timeout is given again too.
    if (claimed.status !== 201) throw replayedFailure(claimed.status, claimed.body);
    return { answer: JSON.parse(claimed.body) as SendAnswer, replayed: true };
  }
  if (claimed.kind === 'mismatch') throw keyErrors.mismatch();
  if (claimed.kind === 'in_flight') {
    const phase = claimed.messageId === null ? undefined : deps.tracker.phaseOf(claimed.messageId);
    if (phase?.phase === 'sending') throw keyErrors.in_flight();
    throw outcomeUnknown(claimed.messageId, phase?.phase === 'storing' ? phase.wamid : undefined);
  }

  const { id } = claimed;
  const result = await deps.client.send(account, message, { pace: { rate: user.messagingRate, slot: (n) => (n === 1 ? turn.at : turn.retry()) } }).catch((error: unknown) => {
    // The client never throws by contract; if it did, the settle job must still be free to settle this message.
    deps.tracker.end(id);
    throw error;
  });
  const settledAt = deps.now().getTime();

  if (result.kind !== 'accepted') {
    const failure = failureError(result);
    const settleFailure = () => {
      deps.messages.markFailed(id, failureRecord(result), settledAt);
      deps.credits.refund(user.id, month);
      // The network was called (after a timeout it may even have delivered): the key keeps this answer, never sends again.
      if (idempotencyKey !== undefined) deps.idempotency.complete(user.id, idempotencyKey, failure.statusCode, keptFailure(failure));
    };
    // The network's answer is the news; a refused write is retried in the background and does not change it.
    await deps.tracker.settle(id, settleFailure, 0).catch((error: unknown) => {
      if (asStorageError(error) === undefined) throw error;
    });
    throw failure;
  }
  try {
    return await deps.tracker.settle(id, () => {
      // The conversation is the contact the network answered: its number, else its user id, else the recipient as sent.
      const contact = contactAnswered(deps.contacts, user.id, result, settledAt)
        ?? sentTo(deps, user.id, message, settledAt, contactId);
      deps.messages.markAccepted(id, result.wamid, contact, settledAt);
      const answer: SendAnswer = {
        id, wamid: result.wamid, to: message.to, type: message.kind, status: 'accepted',
        credits_remaining: Math.max(0, user.monthlyCredits - deps.credits.used(user.id, month)),
        created_at: new Date(startedAt).toISOString(), contact_id: contact.contactId,
      };
      if (idempotencyKey !== undefined) deps.idempotency.complete(user.id, idempotencyKey, 201, JSON.stringify(answer));
      return { answer, replayed: false };
    }, deps.storageWaitMs ?? STORAGE_WAIT_MS, result.wamid);
  } catch (error) {
    // Sent and charged: the client must know not to send it again.
    if (asStorageError(error) !== undefined) throw sentButNotStored(id, result.wamid);
    throw error;
  }
}
