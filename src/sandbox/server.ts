// The sandbox network: a real HTTP server speaking the network's wire format, failing on demand, posting callbacks.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Behaviour, InboundMessage, SandboxAccount } from '../../schemas/sandbox';
import { parseJsonOrUndefined } from '../support/loose-json';
import { createCallbackPoster, type CallbackSettings } from './callbacks';
import { handleControl } from './control';
import { bearer, readBody, reply } from './http';
import { createMediaStore } from './media';
import { checkMessagesBody } from './validate';
import { errorAnswer, freshWamid, InboundError, sendAnswer, type SandboxRefusal } from './wire';

export { statusCallbackPayload, inboundTextPayload, inboundPayload } from './envelopes';
export type { Behaviour } from '../../schemas/sandbox';

export interface RecordedRequest { method: string; path: string; headers: IncomingHttpHeaders; body: string; at: number }

export interface SandboxOptions extends Partial<CallbackSettings> {
  host?: string; port?: number;
  /** Keep every request in `requests` (default); the benchmark turns it off so memory stays flat. */
  record?: boolean;
  /** When set, the control API (/_sandbox/…) answers only requests with `X-Sandbox-Token: <controlToken>`. */
  controlToken?: string;
}

// Every Graph path may carry a version prefix (/v23.0/…); the sandbox routes on what follows it.
const VERSION = /^\/v\d+\.\d+(?=\/)/;
const MESSAGES_PATH = /^\/([^/]+)\/messages$/;
const MEDIA_UPLOAD_PATH = /^\/([^/]+)\/media$/;
const OBJECT_PATH = /^\/([0-9]+)$/;
const DOWNLOAD_PATH = /^\/_media\/([0-9]+)$/;

export async function startSandbox(options: SandboxOptions = {}) {
  const accounts = new Map<string, Required<SandboxAccount>>();
  const queue: Behaviour[] = [];
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const media = createMediaStore(closing.signal);
  let closed: Promise<void> | undefined;
  const callbacks = createCallbackPoster({
    webhookUrl: options.webhookUrl, appSecret: options.appSecret, delayMs: options.delayMs ?? 100, enabled: options.enabled ?? true,
  }, closing.signal);

  function fail(response: ServerResponse, name: SandboxRefusal, headers: Record<string, string> = {}, details?: string): void {
    const answer = errorAnswer(name, details);
    reply(response, answer.status, answer.body, headers);
  }

  async function onMessages(request: IncomingMessage, response: ServerResponse, account: Required<SandboxAccount>, raw: Buffer): Promise<void> {
    const checked = checkMessagesBody(parseJsonOrUndefined(raw.toString('utf8')));
    if (!checked.ok) return fail(response, 'invalid_parameter', {}, checked.details);
    if (checked.kind === 'read') return reply(response, 200, { success: true });

    const behaviour = queue.shift() ?? { kind: 'accept' };
    if (behaviour.kind === 'reset') return void request.socket.destroy();
    if (behaviour.delayMs) await sleep(behaviour.delayMs, undefined, { signal: closing.signal }).catch(() => undefined);
    if (behaviour.kind === 'fail') {
      return fail(response, behaviour.error, behaviour.retryAfter === undefined ? {} : { 'retry-after': String(behaviour.retryAfter) });
    }
    const body = checked.body;
    if (body.to === undefined) return fail(response, 'invalid_parameter', {}, 'to: required');
    const wamid = freshWamid();
    const waId = behaviour.waId ?? body.to;
    reply(response, 200, sendAnswer(body.to, waId, wamid, body.type === 'template'));
    callbacks.statuses(account, wamid, waId, body.biz_opaque_callback_data);
  }

  /** The network's endpoints: every one needs a known token; the phone number id in a path must be that token's. */
  async function onNetwork(request: IncomingMessage, response: ServerResponse, path: string, query: URLSearchParams, raw: Buffer): Promise<void> {
    const method = request.method ?? 'GET';
    const token = bearer(request);
    const account = token === undefined ? undefined : accounts.get(token);
    const download = DOWNLOAD_PATH.exec(path);
    if (download && (method === 'GET' || method === 'HEAD')) return media.download(request, response, download[1]!, query.get('key') ?? '', account?.phoneNumberId);
    if (!account) return fail(response, 'bad_token');

    const own = (id: string) => account.phoneNumberId === decodeURIComponent(id);
    const messages = MESSAGES_PATH.exec(path);
    if (messages && method === 'POST') return own(messages[1]!) ? onMessages(request, response, account, raw) : fail(response, 'unknown_phone_number');
    const upload = MEDIA_UPLOAD_PATH.exec(path);
    if (upload && method === 'POST') {
      return own(upload[1]!) ? media.upload(response, account.phoneNumberId, request.headers['content-type'] ?? '', raw, query) : fail(response, 'unknown_phone_number');
    }
    const object = OBJECT_PATH.exec(path);
    if (object && method === 'GET') return media.retrieve(response, account.phoneNumberId, object[1]!, sandbox.url);
    if (object && method === 'DELETE') return media.remove(response, account.phoneNumberId, object[1]!);
    fail(response, 'unknown_path');
  }

  const sandbox = {
    url: '',
    /** Every request to the network's endpoints, as received (control routes excluded; multipart bodies summarised). */
    requests,
    /** Every callback posted, with the webhook's answer. */
    deliveries: callbacks.deliveries,
    /** Uploaded and injected media, by id. */
    media: { get: media.get, enqueue: media.enqueue },

    /** A token the sandbox accepts for one phone number id. */
    addAccount(account: SandboxAccount): void {
      accounts.set(account.token, { displayPhoneNumber: '15550000000', businessAccountId: '100000000000000', ...account });
    },
    /** Behaviours for the next send requests, in order; an empty queue accepts. */
    enqueue(...behaviours: Behaviour[]): void {
      queue.push(...behaviours);
    },
    configureCallbacks: (settings: Partial<CallbackSettings>) => callbacks.configure(settings),
    /** Posts an inbound message callback (text or media), as if `from` had written to the account. */
    async injectInbound(inbound: Omit<InboundMessage, 'phoneNumberId'> & { phoneNumberId: string }) {
      if ((inbound.text === undefined) === (inbound.media === undefined)) throw new InboundError('give exactly one of text and media');
      const account = [...accounts.values()].find((a) => a.phoneNumberId === inbound.phoneNumberId) ?? { phoneNumberId: inbound.phoneNumberId };
      const attached = inbound.media && media.attach(inbound.phoneNumberId, inbound.media);
      if (typeof attached === 'string') throw new InboundError(attached);
      return callbacks.inbound(account, { from: inbound.from, name: inbound.name, text: inbound.text, media: attached });
    },
    /** Resolves when every scheduled callback has been posted. */
    settled: () => callbacks.settled(),
    /** Forgets recorded requests, deliveries, queued behaviours and media (accounts stay). */
    reset(): void {
      requests.length = 0;
      queue.length = 0;
      callbacks.deliveries.length = 0;
      media.clear();
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
      const url = new URL(`http://sandbox.invalid${request.url ?? '/'}`);
      const path = url.pathname.replace(VERSION, '');
      if (path.startsWith('/_sandbox/')) {
        return handleControl(sandbox, options.controlToken, request, path, parseJsonOrUndefined(raw?.toString('utf8') ?? ''), response);
      }
      if (options.record !== false && !path.startsWith('/_media/')) {
        const multipart = /^multipart\//i.test(request.headers['content-type'] ?? '');
        const body = raw === null ? '' : multipart ? `[multipart, ${raw.length} bytes]` : raw.toString('utf8');
        requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body, at: Date.now() });
      }
      if (raw === null) return fail(response, 'too_large');
      await onNetwork(request, response, path, url.searchParams, raw);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  sandbox.url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  return sandbox;
}
export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
