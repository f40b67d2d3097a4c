// The sandbox network's control API (a development tool, not part of the gateway's API).
import { Type, type Static } from '@sinclair/typebox';

export const SandboxErrorName = Type.Union([
  Type.Literal('bad_token'), Type.Literal('unknown_phone_number'), Type.Literal('invalid_parameter'),
  Type.Literal('undeliverable'), Type.Literal('throttled'), Type.Literal('app_rate_limit'),
  Type.Literal('pair_rate_limit'), Type.Literal('server_error'), Type.Literal('service_unavailable'),
], { description: 'A refusal of the network, with its real HTTP status, code and message' });
export type SandboxErrorName = Static<typeof SandboxErrorName>;

const DelayMs = Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000, description: 'Answer only after this long' }));

/** What the sandbox does with the next send request (FIFO); with an empty queue it accepts. */
export const Behaviour = Type.Union([
  Type.Object({ kind: Type.Literal('accept'), waId: Type.Optional(Type.String({ minLength: 1 })), delayMs: DelayMs }, { additionalProperties: false }),
  Type.Object({
    kind: Type.Literal('fail'), error: SandboxErrorName, delayMs: DelayMs,
    retryAfter: Type.Optional(Type.Integer({ minimum: 0, description: 'Retry-After header, seconds' })),
  }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('reset') }, { additionalProperties: false, description: 'Drop the connection without answering' }),
]);
export type Behaviour = Static<typeof Behaviour>;

export const BehaviourQueue = Type.Object({ queue: Type.Array(Behaviour, { minItems: 1 }) }, { additionalProperties: false });

export const SandboxAccount = Type.Object({
  phoneNumberId: Type.String({ minLength: 1 }),
  token: Type.String({ minLength: 1 }),
  displayPhoneNumber: Type.Optional(Type.String()),
  businessAccountId: Type.Optional(Type.String()),
}, { additionalProperties: false });
export type SandboxAccount = Static<typeof SandboxAccount>;

const InboundMediaSpec = Type.Object({
  type: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document'), Type.Literal('sticker')]),
  id: Type.Optional(Type.String({ minLength: 1, description: 'Media already uploaded to this phone number id' })),
  data: Type.Optional(Type.String({ minLength: 1, description: 'The file, base64 (with mime_type): stored as new media' })),
  mime_type: Type.Optional(Type.String({ minLength: 1 })),
  caption: Type.Optional(Type.String({ minLength: 1 })),
  filename: Type.Optional(Type.String({ minLength: 1 })),
}, { additionalProperties: false });

/** An inbound message to post as if `from` had written: a `text`, or `media` (uploaded before, or given as base64). */
export const InboundMessage = Type.Object({
  phoneNumberId: Type.String({ minLength: 1 }),
  from: Type.String({ pattern: '^[0-9]{5,20}$' }),
  text: Type.Optional(Type.String({ minLength: 1 })),
  media: Type.Optional(InboundMediaSpec),
  name: Type.Optional(Type.String()),
}, { additionalProperties: false });
export type InboundMessage = Static<typeof InboundMessage>;
