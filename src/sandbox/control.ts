// The sandbox's HTTP control routes under /_sandbox/: the same controls tests use programmatically.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { BehaviourQueue, InboundEcho, InboundMessage, InjectedStatus, SandboxAccount, SandboxUser, type Behaviour } from '../../schemas/sandbox';
import type { CallbackSettings, Delivery } from './callbacks';
import { reply } from './http';
import { InboundError } from './wire';

const CallbackChanges = Type.Object({
  webhookUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  appSecret: Type.Optional(Type.String({ minLength: 1 })),
  delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

/** What the control routes drive of a sandbox: the sandbox hands itself over (no import back into the server). */
export interface SandboxControls {
  readonly requests: readonly unknown[];
  readonly deliveries: readonly unknown[];
  reset(): void;
  addAccount(account: SandboxAccount): void;
  enqueue(...behaviours: Behaviour[]): void;
  configureCallbacks(settings: Partial<CallbackSettings>): void;
  users(): readonly unknown[];
  addUser(user: SandboxUser): unknown;
  injectInbound(inbound: InboundMessage): Promise<Delivery & { wamid?: string }>;
  injectEcho(echo: InboundEcho): Promise<Delivery & { wamid?: string }>;
  injectStatus(status: InjectedStatus): Promise<Delivery>;
}

/** The header that carries the control token. */
export const CONTROL_TOKEN_HEADER = 'x-sandbox-token';

function valid<T extends TSchema>(schema: T, body: unknown, response: ServerResponse): body is Static<T> {
  const error = Value.Errors(schema, body).First();
  if (error) reply(response, 400, { error: `${error.path || 'body'}: ${error.message}` });
  return error === undefined;
}

function authorised(expected: string | undefined, request: IncomingMessage): boolean {
  if (expected === undefined) return true;
  const given = request.headers[CONTROL_TOKEN_HEADER];
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(expected));
}

/** What a posted callback came to: its wamid (for a message or echo), the webhook's status, why it failed. */
function delivered(response: ServerResponse, delivery: Delivery & { wamid?: string }): void {
  reply(response, 200, { ...(delivery.wamid === undefined ? {} : { wamid: delivery.wamid }), webhook_status: delivery.status, error: delivery.error });
}

export async function handleControl(
  sandbox: SandboxControls, token: string | undefined, request: IncomingMessage, path: string, body: unknown, response: ServerResponse,
): Promise<void> {
  if (!authorised(token, request)) return reply(response, 401, { error: `the control API needs the ${CONTROL_TOKEN_HEADER} header the sandbox printed` });
  const route = `${request.method ?? 'GET'} ${path}`;
  if (route === 'GET /_sandbox/requests') return reply(response, 200, { requests: sandbox.requests });
  if (route === 'GET /_sandbox/deliveries') return reply(response, 200, { deliveries: sandbox.deliveries });
  if (route === 'POST /_sandbox/reset') {
    sandbox.reset();
    return reply(response, 200, { reset: true });
  }
  if (route === 'POST /_sandbox/accounts' && valid(SandboxAccount, body, response)) {
    sandbox.addAccount(body);
    return reply(response, 201, { phoneNumberId: body.phoneNumberId });
  }
  if (route === 'POST /_sandbox/behaviours' && valid(BehaviourQueue, body, response)) {
    sandbox.enqueue(...body.queue);
    return reply(response, 200, { queued: body.queue.length });
  }
  if (route === 'POST /_sandbox/callbacks' && valid(CallbackChanges, body, response)) {
    sandbox.configureCallbacks(body);
    return reply(response, 200, { configured: true });
  }
  if (route === 'GET /_sandbox/users') return reply(response, 200, { users: sandbox.users() });
  try {
    if (route === 'POST /_sandbox/users' && valid(SandboxUser, body, response)) return reply(response, 201, sandbox.addUser(body));
    if (route === 'POST /_sandbox/inbound' && valid(InboundMessage, body, response)) return delivered(response, await sandbox.injectInbound(body));
    if (route === 'POST /_sandbox/echo' && valid(InboundEcho, body, response)) return delivered(response, await sandbox.injectEcho(body));
    if (route === 'POST /_sandbox/status' && valid(InjectedStatus, body, response)) return delivered(response, await sandbox.injectStatus(body));
  } catch (error) {
    if (error instanceof InboundError) return reply(response, 400, { error: error.message });
    throw error;
  }
  if (!response.headersSent) reply(response, 404, { error: `no control route ${route}` });
}
