// The sandbox network: a real HTTP server speaking the network's wire format, failing on demand, posting callbacks.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Behaviour, InboundEcho, InboundMessage, InjectedStatus, SandboxAccount, SandboxUser } from '../../schemas/sandbox';
import { parseJsonOrUndefined } from '../support/loose-json';
import { createCallbackPoster, type CallbackSettings } from './callbacks';
import { handleControl } from './control';
import { bearer, readBody, reply } from './http';
import { createMediaStore } from './media';
import { checkMessagesBody } from './validate';
import { createUsers, shownPhone, type CallbackUser, type User } from './users';
import { customErrorAnswer, errorAnswer, freshWamid, InboundError, sendAnswer, type SandboxRefusal } from './wire';

export { statusCallbackPayload, inboundTextPayload, inboundPayload, echoPayload } from './envelopes';
export { sandboxUserId, type User } from './users';
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
  const users = createUsers();
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const media = createMediaStore(closing.signal);
  let closed: Promise<void> | undefined;
  const callbacks = createCallbackPoster({
    webhookUrl: options.webhookUrl, appSecret: options.appSecret, delayMs: options.delayMs ?? 100, enabled: options.enabled ?? true,
  }, closing.signal);

  const accountFor = (phoneNumberId: string) => [...accounts.values()].find((a) => a.phoneNumberId === phoneNumberId) ?? { phoneNumberId };
  const callbackUser = (user: User, waId = shownPhone(user)): CallbackUser =>
    ({ waId, userId: user.userId, parentUserId: user.parentUserId, username: user.username, name: user.name });

  function fail(response: ServerResponse, name: SandboxRefusal, headers: Record<string, string> = {}, details?: string): void {
    const answer = errorAnswer(name, details);
    reply(response, answer.status, answer.body, headers);
  }

  async function onMessages(request: IncomingMessage, response: ServerResponse, account: Required<SandboxAccount>, raw: Buffer): Promise<void> {
    const checked = checkMessagesBody(parseJsonOrUndefined(raw.toString('utf8')));
    if (!checked.ok) return fail(response, 'invalid_parameter', {}, checked.details);
    if (checked.kind === 'read') return reply(response, 200, { success: true });

    const body = checked.body;
    // Exactly one recipient: a phone number (`to`) or a business-scoped user id (`recipient`).
    if (body.to !== undefined && body.recipient !== undefined) return fail(response, 'invalid_parameter', {}, 'recipient: give either to or recipient, not both');
    if (body.to === undefined && body.recipient === undefined) return fail(response, 'invalid_parameter', {}, 'to: required (or recipient, a business-scoped user id)');

    const behaviour = queue.shift() ?? { kind: 'accept' };
    if (behaviour.kind === 'reset') return void request.socket.destroy();
    if (behaviour.delayMs) await sleep(behaviour.delayMs, undefined, { signal: closing.signal }).catch(() => undefined);
    if (behaviour.kind === 'fail') {
      const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { 'retry-after': String(behaviour.retryAfter) };
      if ('error' in behaviour) return fail(response, behaviour.error, headers);
      const answer = customErrorAnswer({
        status: behaviour.status ?? 400, code: behaviour.code, type: 'OAuthException',
        message: behaviour.message ?? `(#${behaviour.code}) Sandbox error ${behaviour.code}`, details: behaviour.details,
      });
      return reply(response, answer.status, answer.body, headers);
    }
    const user = body.to !== undefined ? users.forPhone(body.to) : users.forUserId(body.recipient!);
    const phone = shownPhone(user);
    const waId = phone === undefined ? undefined : (behaviour.waId ?? phone);
    const wamid = freshWamid();
    const template = body.type === 'template';
    reply(response, 200, sendAnswer(body.to ?? body.recipient!, { waId, userId: user.userId }, wamid, template));
    callbacks.statuses(account, wamid, { recipient: waId, user: callbackUser(user, waId), template, bizOpaqueCallbackData: body.biz_opaque_callback_data });
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
    /** A user the network knows: a phone and/or a BSUID (a phone alone gets its made-up BSUID), username, parent id, whether the phone is shown. */
    addUser: (user: SandboxUser): User => users.add(user),
    users: () => users.list(),
    /**
     * Posts an inbound message callback (text or media), as if a user had written: `from` a phone and/or `fromUserId` a BSUID.
     * A user added before fills in the rest (and hides the phone when it is not shareable); otherwise a `from` alone
     * gives the pre-2026 shape (no BSUID) and a `fromUserId` alone a phone-less message.
     */
    async injectInbound(inbound: Omit<InboundMessage, 'phoneNumberId'> & { phoneNumberId: string }) {
      if ((inbound.text === undefined) === (inbound.media === undefined)) throw new InboundError('give exactly one of text and media');
      if (inbound.from === undefined && inbound.fromUserId === undefined) throw new InboundError('give from (a phone number), fromUserId (a business-scoped user id) or both');
      const known = users.find(inbound.from, inbound.fromUserId);
      const phone = known ? (known.phoneShareable ? (known.phone ?? inbound.from) : undefined) : inbound.from;
      const user: CallbackUser = {
        waId: phone, userId: inbound.fromUserId ?? known?.userId, parentUserId: inbound.fromParentUserId ?? known?.parentUserId,
        username: inbound.username ?? known?.username,
      };
      const attached = inbound.media && media.attach(inbound.phoneNumberId, inbound.media);
      if (typeof attached === 'string') throw new InboundError(attached);
      return callbacks.inbound(accountFor(inbound.phoneNumberId), {
        from: phone, name: inbound.name ?? known?.name, user, text: inbound.text, media: attached,
      }, inbound.field);
    },
    /** Posts an echo of a text the business sent elsewhere: by the network's AI agent (standby) or the phone app (smb_message_echoes). */
    injectEcho(echo: InboundEcho) {
      if (echo.to === undefined && echo.toUserId === undefined) throw new InboundError('give to (a phone number), toUserId (a business-scoped user id) or both');
      const { phoneNumberId, ...rest } = echo;
      return callbacks.echo(accountFor(phoneNumberId), rest);
    },
    /** Posts one status callback for a wamid to a user named by phone or BSUID (under `messages` or `standby`). */
    injectStatus(injected: InjectedStatus) {
      if ((injected.to === undefined) === (injected.recipient === undefined)) throw new InboundError('give exactly one of to and recipient');
      const user = injected.to !== undefined ? users.forPhone(injected.to) : users.forUserId(injected.recipient!);
      return callbacks.status(accountFor(injected.phoneNumberId), {
        wamid: injected.wamid, status: injected.status, recipient: shownPhone(user), user: callbackUser(user), parentField: injected.parentField,
      }, injected.field ?? 'messages');
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
