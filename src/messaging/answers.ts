// Reads one answer of the messaging network into a typed result, and decides whether SPEC §5 allows a retry.
import { STATUS_CODES } from 'node:http';
import { Value } from '@sinclair/typebox/value';
import { parseJsonOrUndefined } from '../support/loose-json';
import { NetworkErrorAnswer, NetworkSendAnswer } from '../../schemas/network';

/** Throttling: retried, answered 429 when it persists. */
const THROTTLING = new Set([4, 80007, 130429]);
/** The per-recipient pair limit: answered 429 at once, never retried in-request. */
const PAIR_RATE_LIMIT = 131056;
/** Temporary unavailability: retried, answered 502 when it persists. */
export const TEMPORARY = new Set([2, 131016, 131057, 133004]);
/** Retry-After we answer when the network gives none (the pair limit allows one message per ~6 s). */
const DEFAULT_RETRY_AFTER_S = 1;
const PAIR_RETRY_AFTER_S = 6;

/** The network's error, as our API exposes it under `upstream`. */
export interface Upstream {
  http_status: number;
  code: number | null;
  subcode: number | null;
  message: string;
  details: string | null;
  fbtrace_id: string | null;
}

export type SendResult =
  /** `waId`/`userId`: the recipient as the network answered it (`contacts[0]`), each null when it named none. */
  | { kind: 'accepted'; wamid: string; waId: string | null; userId: string | null }
  | { kind: 'rejected'; upstream: Upstream }
  | { kind: 'throttled'; upstream: Upstream; retryAfterSeconds: number }
  | { kind: 'unavailable'; reason: 'timeout' | 'unreachable' | 'bad_answer'; detail: string };

/** One attempt; `retry` only where the network certainly did not accept the message. */
export interface Attempt { result: SendResult; retry: boolean; retryAfterMs?: number }

/** `Retry-After` as seconds (delta-seconds or an HTTP date, the first if repeated); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function upstreamOf(status: number, json: unknown): Upstream {
  if (!Value.Check(NetworkErrorAnswer, json)) {
    return { http_status: status, code: null, subcode: null, message: `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim(), details: null, fbtrace_id: null };
  }
  const e = json.error;
  return {
    http_status: status, code: e.code, subcode: e.error_subcode ?? null, message: e.message,
    details: e.error_data?.details ?? null, fbtrace_id: e.fbtrace_id ?? null,
  };
}

export function readAnswer(status: number, retryAfter: string | string[] | undefined, text: string): Attempt {
  const json = parseJsonOrUndefined(text);
  if (status >= 200 && status < 300) {
    if (!Value.Check(NetworkSendAnswer, json) || !json.messages[0]) {
      return { result: { kind: 'unavailable', reason: 'bad_answer', detail: `HTTP ${status} without a message id` }, retry: false };
    }
    const contact = json.contacts?.[0];
    return { result: { kind: 'accepted', wamid: json.messages[0].id, waId: contact?.wa_id ?? null, userId: contact?.user_id ?? null }, retry: false };
  }
  const upstream = upstreamOf(status, json);
  const code = upstream.code ?? -1;
  const retry = code !== PAIR_RATE_LIMIT && (status === 429 || THROTTLING.has(code) || TEMPORARY.has(code));
  const retryAfterS = parseRetryAfter(retryAfter);
  const retryAfterMs = retryAfterS === undefined ? undefined : retryAfterS * 1000;
  if (status === 429 || THROTTLING.has(code) || code === PAIR_RATE_LIMIT) {
    const retryAfterSeconds = retryAfterS ?? (code === PAIR_RATE_LIMIT ? PAIR_RETRY_AFTER_S : DEFAULT_RETRY_AFTER_S);
    return { result: { kind: 'throttled', upstream, retryAfterSeconds }, retry, retryAfterMs };
  }
  return { result: { kind: 'rejected', upstream }, retry, retryAfterMs };
}

/** The network's answer to a mark-read: any 2xx took it (`accepted`, under the message's own wamid); refusals as for sends. */
export function readMarkReadAnswer(wamid: string, status: number, retryAfter: string | string[] | undefined, text: string): Attempt {
  if (status >= 200 && status < 300) return { result: { kind: 'accepted', wamid, waId: null, userId: null }, retry: false };
  return readAnswer(status, retryAfter, text);
}
