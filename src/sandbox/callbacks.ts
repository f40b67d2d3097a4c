// The sandbox's outgoing side: signed status and inbound callbacks POSTed to the gateway's webhook.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import {
  echoPayload, inboundPayload, statusCallbackPayload, type AccountInfo, type CallbackField, type EchoFact, type InboundFact, type InboundMedia, type StatusFact,
} from './envelopes';
import { escapeNonAscii, signBody } from './sign';
import { freshWamid } from './wire';

export interface CallbackSettings {
  /** Where callbacks go, e.g. http://127.0.0.1:3000/api/messaging/webhook; none: nothing is posted. */
  webhookUrl?: string;
  /** Signs every callback (X-Hub-Signature-256) when set. */
  appSecret?: string;
  /** Pause before each of sent, delivered and read. */
  delayMs: number;
  /** Off: accepted sends post no status callbacks (inbound injection still works). */
  enabled: boolean;
}

export interface Delivery {
  kind: 'status' | 'inbound' | 'echo';
  /** The bytes posted: JSON with non-ASCII escaped, as the network sends it. */
  body: string;
  signature: string | null;
  /** The webhook's HTTP status; null when it could not be reached (see `error`). */
  status: number | null;
  error: string | null;
}

type Account = Partial<AccountInfo> & { phoneNumberId: string };

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function createCallbackPoster(initial: CallbackSettings, closing: AbortSignal) {
  const settings = { ...initial };
  const deliveries: Delivery[] = [];
  const pending = new Set<Promise<unknown>>();
  const agent = new Agent({ keepAliveTimeout: 1000, headersTimeout: 10_000, bodyTimeout: 10_000 });

  function track<T>(work: Promise<T>): Promise<T> {
    pending.add(work);
    const done = () => pending.delete(work);
    work.then(done, done);
    return work;
  }

  async function post(kind: Delivery['kind'], payload: unknown): Promise<Delivery> {
    const body = escapeNonAscii(JSON.stringify(payload));
    const signature = settings.appSecret ? signBody(body, settings.appSecret) : null;
    const delivery: Delivery = { kind, body, signature, status: null, error: null };
    deliveries.push(delivery);
    if (!settings.webhookUrl) {
      delivery.error = 'no webhook URL configured';
      return delivery;
    }
    try {
      const answer = await request(settings.webhookUrl, {
        method: 'POST', body, dispatcher: agent, signal: closing,
        headers: { 'content-type': 'application/json', 'user-agent': 'facebookexternalua', ...(signature ? { 'x-hub-signature-256': signature } : {}) },
      });
      await answer.body.dump();
      delivery.status = answer.statusCode;
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    return delivery;
  }

  return {
    deliveries,
    configure(changes: Partial<CallbackSettings>): void {
      Object.assign(settings, changes);
    },
    /** sent, delivered, read — each after `delayMs`, one after the other. */
    statuses(account: Account, wamid: string, target: Omit<StatusFact, 'wamid' | 'status' | 'timestamp'>): void {
      if (!settings.enabled || !settings.webhookUrl) return;
      void track((async () => {
        for (const status of ['sent', 'delivered', 'read'] as const) {
          await sleep(settings.delayMs, undefined, { signal: closing });
          await post('status', statusCallbackPayload(account.phoneNumberId, { ...target, wamid, status, timestamp: nowSeconds() }, account));
        }
      })().catch(() => undefined));
    },
    /** One status now (whether or not automatic statuses are on). */
    status: (account: Account, fact: Omit<StatusFact, 'timestamp'>, field: CallbackField): Promise<Delivery> =>
      track(post('status', statusCallbackPayload(account.phoneNumberId, { ...fact, timestamp: nowSeconds() }, account, field))),
    async inbound(
      account: Account, inbound: Omit<InboundFact, 'wamid' | 'timestamp' | 'text'> & { text?: string; media?: InboundMedia }, field: CallbackField = 'messages',
    ): Promise<Delivery & { wamid: string }> {
      const wamid = freshWamid();
      const fact = { ...inbound, wamid, name: inbound.name ?? 'Sandbox Contact', timestamp: nowSeconds() };
      const delivery = await track(post('inbound', inboundPayload(account.phoneNumberId, fact, account, field)));
      return { ...delivery, wamid };
    },
    async echo(account: Account, echo: Omit<EchoFact, 'wamid' | 'timestamp'>): Promise<Delivery & { wamid: string }> {
      const wamid = freshWamid();
      const delivery = await track(post('echo', echoPayload(account.phoneNumberId, { ...echo, wamid, timestamp: nowSeconds() }, account)));
      return { ...delivery, wamid };
    },
    async settled(): Promise<void> {
      while (pending.size > 0) await Promise.all(pending);
    },
    close: (): Promise<void> => agent.close(),
  };
}
