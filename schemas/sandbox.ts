// The sandbox network's control API (a development tool, not part of the gateway's API).
import { Type, type Static } from '@sinclair/typebox';
import { BSUID_PATTERN } from './network-send';

export const SandboxErrorName = Type.Union([
  Type.Literal('bad_token'), Type.Literal('unknown_phone_number'), Type.Literal('invalid_parameter'),
  Type.Literal('undeliverable'), Type.Literal('throttled'), Type.Literal('app_rate_limit'),
  Type.Literal('pair_rate_limit'), Type.Literal('server_error'), Type.Literal('service_unavailable'),
  Type.Literal('bsuid_not_supported'),
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
  Type.Object({
    kind: Type.Literal('fail'), code: Type.Integer({ minimum: 1, description: 'Any network error code, e.g. 131062' }), delayMs: DelayMs,
    status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599, description: 'HTTP status (default 400)' })),
    message: Type.Optional(Type.String({ minLength: 1, description: 'default "(#<code>) Sandbox error <code>"' })),
    details: Type.Optional(Type.String({ minLength: 1 })),
    retryAfter: Type.Optional(Type.Integer({ minimum: 0, description: 'Retry-After header, seconds' })),
  }, { additionalProperties: false, description: 'Fail with any network error code' }),
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

const Phone = Type.String({ pattern: '^[0-9]{5,20}$', description: 'phone number, digits only' });
const Bsuid = Type.String({ pattern: BSUID_PATTERN, description: 'business-scoped user id, e.g. US.13491208655302741918' });
const Username = Type.String({ minLength: 1, maxLength: 64, description: 'e.g. @pablomorales' });
/** Which webhook field carries it: `messages`, or `standby` (the network's AI agent holds the chat: inside `value.standby`). */
const Field = Type.Optional(Type.Union([Type.Literal('messages'), Type.Literal('standby')]));

/** A user of the network: a phone number and/or a BSUID (a phone alone gets a stable made-up BSUID). */
export const SandboxUser = Type.Object({
  phone: Type.Optional(Phone),
  userId: Type.Optional(Bsuid),
  parentUserId: Type.Optional(Bsuid),
  username: Type.Optional(Username),
  name: Type.Optional(Type.String({ minLength: 1 })),
  phoneShareable: Type.Optional(Type.Boolean({ description: 'Callbacks and answers show the phone (default true); false: as for a username user the business has not talked to for 30 days' })),
}, { additionalProperties: false });
export type SandboxUser = Static<typeof SandboxUser>;

/**
 * An inbound message to post as if a user had written: a `text`, or `media` (uploaded before, or given as base64).
 * The sender is `from` (a phone) and/or `fromUserId` (a BSUID); a user added before fills in the rest.
 */
export const InboundMessage = Type.Object({
  phoneNumberId: Type.String({ minLength: 1 }),
  from: Type.Optional(Phone),
  fromUserId: Type.Optional(Bsuid),
  fromParentUserId: Type.Optional(Bsuid),
  username: Type.Optional(Username),
  text: Type.Optional(Type.String({ minLength: 1 })),
  media: Type.Optional(InboundMediaSpec),
  name: Type.Optional(Type.String()),
  field: Field,
}, { additionalProperties: false });
export type InboundMessage = Static<typeof InboundMessage>;

/** An echo of a message the business sent elsewhere: by the network's AI agent (`standby`) or the phone app (`smb_message_echoes`). */
export const InboundEcho = Type.Object({
  phoneNumberId: Type.String({ minLength: 1 }),
  origin: Type.Union([Type.Literal('agent'), Type.Literal('business_app')]),
  to: Type.Optional(Phone),
  toUserId: Type.Optional(Bsuid),
  text: Type.String({ minLength: 1 }),
}, { additionalProperties: false });
export type InboundEcho = Static<typeof InboundEcho>;

/** One status callback for a wamid, to a user named by phone (`to`) or BSUID (`recipient`). */
export const InjectedStatus = Type.Object({
  phoneNumberId: Type.String({ minLength: 1 }),
  wamid: Type.String({ minLength: 1 }),
  status: Type.Union([Type.Literal('sent'), Type.Literal('delivered'), Type.Literal('read')]),
  to: Type.Optional(Phone),
  recipient: Type.Optional(Bsuid),
  field: Field,
  parentField: Type.Optional(Type.Union([Type.Literal('recipient_parent_user_id'), Type.Literal('parent_recipient_user_id')], {
    description: 'The parent id\'s field name: the current one (default) or the earlier one (before 2026-05-05)',
  })),
}, { additionalProperties: false });
export type InjectedStatus = Static<typeof InjectedStatus>;
