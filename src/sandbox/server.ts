// The sandbox network: a real HTTP server speaking the network's wire format, failing on demand, posting callbacks.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Value } from '@sinclair/typebox/value';
import { NetworkSendRequest } from '../../schemas/network';
import type { Behaviour, InboundText, SandboxAccount } from '../../schemas/sandbox';
import { MESSAGING_PRODUCT } from '../messaging/client';
import { createCallbackPoster, type CallbackSettings } from './callbacks';
import { handleControl } from './control';
import { parseJsonOrUndefined } from '../loose-json';
import { readBody, reply } from './http';
import { errorAnswer, freshWamid, sendAnswer } from './wire';

export { statusCallbackPayload, inboundTextPayload } from './wire';
export type { Behaviour } from '../../schemas/sandbox';

export interface RecordedRequest { method: string; path: string; headers: IncomingHttpHeaders; body: string; at: number }

export interface SandboxOptions extends Partial<CallbackSettings> {
  host?: string; port?: number;
  /** Keep every request in `requests` (default); the benchmark turns it off so memory stays flat. */
  record?: boolean;
}

const MESSAGES_PATH = /^(?:\/v\d+\.\d+)?\/([^/]+)\/messages$/;

export async function startSandbox(options: SandboxOptions = {}) {
  const accounts = new Map<string, Required<SandboxAccount>>();
  const queue: Behaviour[] = [];
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  let closed: Promise<void> | undefined;
  const callbacks = createCallbackPoster({
    webhookUrl: options.webhookUrl, appSecret: options.appSecret, delayMs: options.delayMs ?? 100, enabled: options.enabled ?? true,
  }, closing.signal);

  async function onSend(request: IncomingMessage, response: ServerResponse, phoneNumberId: string, raw: string): Promise<void> {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const account = token === undefined ? undefined : accounts.get(token);
    if (!account) return void fail(response, 'bad_token');
    if (account.phoneNumberId !== decodeURIComponent(phoneNumberId)) return void fail(response, 'unknown_phone_number');
    const body = parseJsonOrUndefined(raw);
    if (!Value.Check(NetworkSendRequest, body) || body.messaging_product !== MESSAGING_PRODUCT) return void fail(response, 'invalid_parameter');

    const behaviour = queue.shift() ?? { kind: 'accept' };
    if (behaviour.kind === 'reset') return void request.socket.destroy();
    if (behaviour.delayMs) await sleep(behaviour.delayMs, undefined, { signal: closing.signal }).catch(() => undefined);
    if (behaviour.kind === 'fail') {
      const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { 'retry-after': String(behaviour.retryAfter) };
      return void fail(response, behaviour.error, headers);
    }
    const wamid = freshWamid();
    const waId = behaviour.waId ?? body.to;
    reply(response, 200, sendAnswer(body.to, waId, wamid, body.type === 'template'));
    callbacks.statuses(account, wamid, waId);
  }

  function fail(response: ServerResponse, name: Parameters<typeof errorAnswer>[0], headers: Record<string, string> = {}): void {
    const answer = errorAnswer(name);
    reply(response, answer.status, answer.body, headers);
  }

  const sandbox = {
    url: '',
    /** Every request to the network's endpoints, as received (control routes excluded). */
    requests,
    /** Every callback posted, with the webhook's answer. */
    deliveries: callbacks.deliveries,

    /** A token the sandbox accepts for one phone number id. */
    addAccount(account: SandboxAccount): void {
      accounts.set(account.token, { displayPhoneNumber: '15550000000', businessAccountId: '100000000000000', ...account });
    },
    /** Behaviours for the next send requests, in order; an empty queue accepts. */
    enqueue(...behaviours: Behaviour[]): void {
      queue.push(...behaviours);
    },
    configureCallbacks: (settings: Partial<CallbackSettings>) => callbacks.configure(settings),
    /** Posts an inbound text message callback, as if `from` had written to the account. */
    injectInbound(inbound: InboundText) {
      const account = [...accounts.values()].find((a) => a.phoneNumberId === inbound.phoneNumberId);
      return callbacks.inbound(account ?? { phoneNumberId: inbound.phoneNumberId }, inbound);
    },
    /** Resolves when every scheduled callback has been posted. */
    settled: () => callbacks.settled(),
    /** Forgets recorded requests, deliveries and queued behaviours (accounts stay). */
    reset(): void {
      requests.length = 0;
      queue.length = 0;
      callbacks.deliveries.length = 0;
    },
    /** Stops answering, drops open connections and pending callbacks; calling it again does nothing. */
    close(): Promise<void> {
      closed ??= (async () => {
        closing.abort();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await callbacks.close();
      })();
      return closed;
    },
  };

  const server = createServer((request, response) => {
    void (async () => {
      const raw = await readBody(request);
      const path = (request.url ?? '/').split('?')[0]!;
      if (path.startsWith('/_sandbox/')) return handleControl(sandbox, request.method ?? 'GET', path, parseJsonOrUndefined(raw), response);
      if (options.record !== false) requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: raw, at: Date.now() });
      const match = MESSAGES_PATH.exec(path);
      if (request.method !== 'POST' || !match) return reply(response, 404, { error: { message: 'Unknown path components', type: 'OAuthException', code: 2500 } });
      await onSend(request, response, match[1]!, raw);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  sandbox.url = `http://${address}:${port}`;
  return sandbox;
}
export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
