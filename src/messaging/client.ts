// The only module that talks to the messaging network: wire bodies, retries per SPEC §5, and the calls themselves,
// which its own thread makes at each number's pace (network-thread.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { FreeFormContent, FreeFormType, NetworkTemplate, TemplateButton, TemplateHeader } from '../../schemas/messages';
import { MESSAGING_PRODUCT, type NetworkSendRequest, type NetworkTemplateComponent } from '../../schemas/network';
import type { NetworkMarkReadRequest } from '../../schemas/network-send';
import { readAnswer, readMarkReadAnswer, type Attempt, type SendResult } from './answers';
import { TIMEOUTS } from './failures';
import { createNetworkCalls, type CallAsked } from './network-calls';

export type { SendResult, Upstream } from './answers';

const MAX_ATTEMPTS = 3;
const BACKOFF_BASE_MS = 200;
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Failures where the request certainly never reached the network (refused, reset before any answer). */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/** A free-form message other than text: the network's own content object, as validated (`content` is sent as it is). */
type FreeForm = { [K in Exclude<FreeFormType, 'text'>]: { kind: K; to: string; content: FreeFormContent<K>; replyTo?: string } }[Exclude<FreeFormType, 'text'>];

/** What the gateway sends; optional fields are present only when given (the idempotency fingerprint is this object). */
export type OutboundMessage = (
  | { kind: 'text'; to: string; body: string; previewUrl?: boolean; replyTo?: string }
  | {
    kind: 'template'; to: string; name: string; language: string; params: string[];
    header?: TemplateHeader;
    /** Each with its position in the approved template resolved. */
    buttons?: (TemplateButton & { index: number })[];
    /** Sent in the network's own form (POST /api/message/send): its language object and components as given. */
    network?: { language: NetworkTemplate['language']; components?: NetworkTemplateComponent[] };
  }
  | FreeForm
// `to` is the recipient as sent: a phone number, or with `toBsuid` a business-scoped user id (sent in the wire field `recipient`).
) & { toBsuid?: true };

/**
 * Per send: the number's pace (`slot(n)`: attempt n's slot, from the pacer's `reserve`; the attempt leaves at it once
 * the number's last `rate` calls leave room in the past second), and fewer attempts than 3 (the queue handles
 * throttling itself).
 */
export interface SendOptions { pace?: { rate: number; slot(attempt: number): number; onLeft?: () => void }; attempts?: number }

export interface MessagingAccount { phoneNumberId: string; token: string }

export interface MessagingClientOptions {
  baseUrl: string; timeoutMs: number; connections?: number;
  /** Where a failed call's cause is logged (its error code and message, never the token). */
  log?: { warn(details: object, message: string): void };
  /** Told of every call to the network (each retry is one) and its duration: the metrics. */
  observe?: (result: SendResult, seconds: number) => void;
  /** The retry budget's clock and the wait between attempts (tests record the waits instead of waiting). */
  clock?: { now(): number; sleep(ms: number): Promise<unknown> };
}

/** A template header as the network's header component. */
function headerComponent(header: TemplateHeader): NetworkTemplateComponent {
  switch (header.type) {
    case 'text':
      return { type: 'header', parameters: [{ type: 'text', text: header.text }] };
    case 'location': {
      const { type: _type, ...location } = header;
      return { type: 'header', parameters: [{ type: 'location', location }] };
    }
    default: {
      const { type, ...media } = header;
      return { type: 'header', parameters: [{ type, [type]: media } as Extract<NetworkTemplateComponent, { type: 'header' }>['parameters'][number]] };
    }
  }
}

/** A template button as the network's button component; `index` as the string the network documents. */
const buttonComponent = (button: TemplateButton & { index: number }): NetworkTemplateComponent => ({
  type: 'button', sub_type: button.sub_type, index: String(button.index),
  parameters: [button.sub_type === 'quick_reply' ? { type: 'payload', payload: button.payload } : { type: 'text', text: button.text }],
});

/** The JSON body of `POST /{phone_number_id}/messages`: components in the order header, body, buttons. */
export function wireBody(message: OutboundMessage): NetworkSendRequest {
  const common = { messaging_product: MESSAGING_PRODUCT, recipient_type: 'individual' as const, ...(message.toBsuid ? { recipient: message.to } : { to: message.to }) };
  const context = message.kind !== 'template' && message.replyTo !== undefined ? { context: { message_id: message.replyTo } } : {};
  if (message.kind === 'text') {
    const text = message.previewUrl === undefined ? { body: message.body } : { body: message.body, preview_url: message.previewUrl };
    return { ...common, ...context, type: 'text', text };
  }
  if (message.kind !== 'template') return { ...common, ...context, type: message.kind, [message.kind]: message.content } as NetworkSendRequest;
  if (message.network) {
    const { language, components: given } = message.network;
    return { ...common, type: 'template', template: { name: message.name, language, ...(given === undefined ? {} : { components: given }) } };
  }
  const components: NetworkTemplateComponent[] = [];
  if (message.header) components.push(headerComponent(message.header));
  if (message.params.length > 0) components.push({ type: 'body', parameters: message.params.map((text) => ({ type: 'text' as const, text })) });
  for (const button of message.buttons ?? []) components.push(buttonComponent(button));
  return { ...common, type: 'template', template: { name: message.name, language: { code: message.language }, components } };
}

/** Exponential backoff with equal jitter: attempt n waits between half and all of base × 2^(n-1). */
function backoffMs(attempt: number): number {
  const ceiling = BACKOFF_BASE_MS * 2 ** (attempt - 1);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** A failure's message with the token masked wherever it might appear. */
const masked = (message: string, token: string): string => (token === '' ? message : message.split(token).join('[redacted]'));

export function createMessagingClient(options: MessagingClientOptions) {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const { timeoutMs } = options;
  const clock = options.clock ?? { now: Date.now, sleep };
  const calls = createNetworkCalls({
    origin: base.origin, connections: options.connections ?? 32, timeoutMs, maxAnswerBytes: MAX_ANSWER_BYTES,
  });
  const timeout = (detail: string): Attempt => ({ result: { kind: 'unavailable', reason: 'timeout', detail }, retry: false });

  type Reader = (status: number, retryAfter: string | string[] | undefined, text: string) => Attempt;

  async function attempt(asked: CallAsked, read: Reader): Promise<{ outcome: Attempt; ms: number }> {
    const reply = await calls.call(asked);
    if (!('failure' in reply)) return { outcome: read(reply.status, reply.retryAfter, reply.text), ms: reply.ms };
    const { code, message, timedOut, answered } = reply.failure;
    const { path, token } = asked;
    // The status we answer (504) alone cannot tell a refused connection from, say, a token undici will not put in a header.
    options.log?.warn({ code, error: masked(message, token), timedOut, answered, path }, 'messaging network call failed');
    const outcome: Attempt = timedOut || TIMEOUTS.has(code) ? timeout(`no complete answer within ${reply.deadlineMs} ms`)
      // Broken off after the network began to answer: it may have accepted the message.
      : answered ? { result: { kind: 'unavailable', reason: 'bad_answer', detail: code }, retry: false }
        : { result: { kind: 'unavailable', reason: 'unreachable', detail: code }, retry: NOT_DELIVERED.has(code) };
    return { outcome, ms: reply.ms };
  }

  return {
    /** Total time one send may take, retries and the waits for their turns included. */
    budgetMs: 2 * timeoutMs,

    /** Sends one message; never throws. At most 3 attempts within 2 × the timeout. */
    send: (account: MessagingAccount, message: OutboundMessage, sendOptions?: SendOptions): Promise<SendResult> =>
      call(account, JSON.stringify(wireBody(message)), readAnswer, sendOptions),
    /** Sends a stored wire body (a queued message); as `send`. */
    sendPayload: (account: MessagingAccount, payload: string, sendOptions?: SendOptions): Promise<SendResult> =>
      call(account, payload, readAnswer, sendOptions),

    /**
     * Marks the inbound message `wamid` read (and shows a typing indicator when asked); never throws. The same pool,
     * deadlines, retries and error mapping as a send; `accepted` when the network took it.
     */
    markRead(account: MessagingAccount, wamid: string, typingIndicator = false): Promise<SendResult> {
      const body: NetworkMarkReadRequest = {
        messaging_product: MESSAGING_PRODUCT, status: 'read', message_id: wamid, ...(typingIndicator ? { typing_indicator: { type: 'text' as const } } : {}),
      };
      return call(account, JSON.stringify(body), (status, retryAfter, text) => readMarkReadAnswer(wamid, status, retryAfter, text));
    },

    close: (): Promise<void> => calls.close(),
  };

  /** One request to the account's `/messages`: at most 3 attempts (or `sendOptions.attempts`) within 2 × the timeout, each after its pacing turn. */
  async function call(account: MessagingAccount, payload: string, read: Reader, sendOptions: SendOptions = {}): Promise<SendResult> {
    const path = `${basePath}/${encodeURIComponent(account.phoneNumberId)}/messages`;
    const deadline = clock.now() + 2 * timeoutMs;
    const attempts = sendOptions.attempts ?? MAX_ATTEMPTS;
    for (let n = 1; ; n++) {
      const { pace } = sendOptions;
      const { outcome, ms } = await attempt({
        path, token: account.token, payload, budgetMs: deadline - clock.now(), onLeft: pace?.onLeft,
        pace: pace && { lane: account.phoneNumberId, rate: pace.rate, at: performance.timeOrigin + pace.slot(n) },
      }, read);
      options.observe?.(outcome.result, ms / 1000);
      if (!outcome.retry || n >= attempts) return outcome.result;
      const wait = Math.max(backoffMs(n), outcome.retryAfterMs ?? 0);
      // A retry needs at least half a timeout left after its wait, or it is not worth starting.
      if (clock.now() + wait + timeoutMs / 2 > deadline) return outcome.result;
      await clock.sleep(wait);
    }
  }
}
export type MessagingClient = ReturnType<typeof createMessagingClient>;
