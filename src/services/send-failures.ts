// What a send that the network did not accept becomes: the error kept on the message, and the API error.
import type { SendResult } from '../messaging/client';
import { AppError, STORAGE_RETRY_AFTER_S } from '../errors';

type Failure = Exclude<SendResult, { kind: 'accepted' }>;
/** The network's code for a message type that cannot go to a business-scoped user id. */
const BSUID_NOT_ALLOWED = 131062;

const UNAVAILABLE_TITLES = {
  timeout: 'No answer from the messaging network in time',
  unreachable: 'The messaging network could not be reached',
  bad_answer: 'The messaging network answered in an unexpected way',
} as const;
// Only an unreachable network certainly did not take the message; after a timeout or an odd answer it may have.
const UNAVAILABLE_OUTCOMES = {
  timeout: 'the message may or may not have been sent; no credit was used',
  unreachable: 'the message was not sent and no credit was used',
  bad_answer: 'the message may or may not have been sent; no credit was used',
} as const;

/** The message's `error_json`: `{code, title, details}` (as in status callbacks) plus the network's whole refusal. */
export function failureRecord(result: Failure): string {
  if (result.kind === 'unavailable') {
    return JSON.stringify({ code: 'MESSAGING_UNAVAILABLE', title: UNAVAILABLE_TITLES[result.reason], details: result.detail });
  }
  const { upstream } = result;
  return JSON.stringify({ code: upstream.code, title: upstream.message, details: upstream.details, upstream });
}

export function failureError(result: Failure): AppError {
  switch (result.kind) {
    case 'rejected':
      if (result.upstream.code === BSUID_NOT_ALLOWED) {
        return new AppError(502, 'MESSAGING_REJECTED', 'The messaging network refused the message: this message type (e.g. a one-tap '
          + `or zero-tap authentication template) cannot be sent to a user id (BSUID); send it to the contact's phone number (${result.upstream.message})`,
        { upstream: result.upstream });
      }
      return new AppError(502, 'MESSAGING_REJECTED', `The messaging network refused the message: ${result.upstream.message}`,
        { upstream: result.upstream });
    case 'throttled':
      return new AppError(429, 'MESSAGING_RATE_LIMITED', `The messaging network is throttling; retry after ${result.retryAfterSeconds} s`,
        { upstream: result.upstream }, { 'retry-after': String(result.retryAfterSeconds) });
    case 'unavailable':
      return new AppError(504, 'MESSAGING_UNAVAILABLE', `${UNAVAILABLE_TITLES[result.reason]}; ${UNAVAILABLE_OUTCOMES[result.reason]}`);
  }
}

/** What an Idempotency-Key keeps of a failure answer (its status is kept beside it), to give it again on a repeat. */
export function keptFailure(error: AppError): string {
  return JSON.stringify({ code: error.code, message: error.message, extra: error.extra, headers: error.headers });
}

/** The kept failure answer again, marked as a replay: no new network call, no new charge or refund. */
export function replayedFailure(status: number, kept: string): AppError {
  const { code, message, extra, headers } = JSON.parse(kept) as {
    code: string; message: string; extra?: Record<string, unknown>; headers?: Record<string, string>;
  };
  return new AppError(status, code, message, extra, { ...headers, 'idempotent-replayed': 'true' });
}

/** The network accepted the message but storage refused its answer (SPEC §5 item 7): sent, charged, never to be sent again. */
export function sentButNotStored(id: number, wamid: string): AppError {
  return new AppError(503, 'STORAGE_UNAVAILABLE',
    `The message was sent (wamid ${wamid}) but the gateway cannot store that right now; do not send it again: it is stored as soon as storage takes writes again`,
    { id, wamid, sent: true }, { 'retry-after': String(STORAGE_RETRY_AFTER_S) });
}

/**
 * A repeat of an Idempotency-Key whose first request has no stored outcome: the process stopped mid-send, or storing
 * the network's answer failed. Never a second network call; the client decides whether to send again under a new key.
 */
export function outcomeUnknown(messageId: number | null, wamid?: string): AppError {
  if (wamid !== undefined) {
    return new AppError(502, 'MESSAGING_OUTCOME_UNKNOWN',
      `The first request with this Idempotency-Key sent message ${messageId} (wamid ${wamid}) but its outcome is not stored yet; do not send it again`,
      { id: messageId, wamid, sent: true });
  }
  return new AppError(502, 'MESSAGING_OUTCOME_UNKNOWN',
    'The first request with this Idempotency-Key was interrupted before its outcome was stored: the message may or may not have been sent. '
    + 'Check it, and send again under a new key if needed', { id: messageId });
}
