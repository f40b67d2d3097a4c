// The messaging network's wire format (Cloud API): send answers, the error envelope, media, webhook envelopes.
import { Type, type Static } from '@sinclair/typebox';

// --- POST /{phone_number_id}/messages: the send bodies are in network-send.ts ----------------------

export * from './network-send';

/** The network's own names: the product on every wire body and the `object` of every callback envelope. */
export const MESSAGING_PRODUCT = 'whatsapp';
export const WEBHOOK_OBJECT = 'whatsapp_business_account';

/** Success: `messages[0].id` is the wamid; `contacts[0].wa_id` the recipient as the network knows it. */
export const NetworkSendAnswer = Type.Object({
  messaging_product: Type.String(),
  // `wa_id` when the network may share the phone number, `user_id` (the BSUID) since 2026: either may be absent.
  contacts: Type.Optional(Type.Array(Type.Object({
    input: Type.String(), wa_id: Type.Optional(Type.String({ minLength: 1 })), user_id: Type.Optional(Type.String({ minLength: 1 })),
  }))),
  messages: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), message_status: Type.Optional(Type.String()) }), { minItems: 1 }),
});
export type NetworkSendAnswer = Static<typeof NetworkSendAnswer>;

/** Every refusal of the Graph API: `{"error": {message, type, code, error_subcode, error_data: {details}, fbtrace_id}}`. */
export const NetworkErrorAnswer = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.Optional(Type.String()),
    code: Type.Integer(),
    error_subcode: Type.Optional(Type.Integer()),
    error_data: Type.Optional(Type.Object({ messaging_product: Type.Optional(Type.String()), details: Type.Optional(Type.String()) })),
    fbtrace_id: Type.Optional(Type.String()),
  }),
});
export type NetworkErrorAnswer = Static<typeof NetworkErrorAnswer>;

// --- Media: POST /{phone_number_id}/media (multipart) -> {id}; GET /{media_id}; DELETE /{media_id} ---------

/** The lookup answer: `url` (short-lived, downloadable with the Bearer token), `sha256` as hex. */
export const NetworkMediaInfo = Type.Object({
  messaging_product: Type.Optional(Type.String()),
  url: Type.String({ minLength: 1 }),
  mime_type: Type.String(),
  sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  file_size: Type.Integer({ minimum: 0 }),
  id: Type.String({ minLength: 1 }),
});
export type NetworkMediaInfo = Static<typeof NetworkMediaInfo>;

export const NetworkMediaUploadAnswer = Type.Object({ id: Type.String({ minLength: 1 }) });
/** Answer of a delete and of marking a message read. */

// --- Webhook callbacks ------------------------------------------------------------------------
// The gateway checks an envelope level by level, each item on its own (one bad item must not hide the
// others), and requires only what it uses: the rest is read leniently if present.

export const NetworkEnvelope = Type.Object({ entry: Type.Array(Type.Unknown()) });
export const NetworkEntry = Type.Object({ changes: Type.Array(Type.Unknown()) });
export const NetworkChange = Type.Object({ field: Type.String(), value: Type.Unknown() });

/** The fields a change's `value` may carry besides `messages`: `standby` (the network's agent holds the chat), echoes. */
export const CHANGE_FIELDS = { messages: 'messages', standby: 'standby', echoes: 'smb_message_echoes' } as const;

/** `value` of a change with `field: "messages"` (also `standby`, whose lists sit under `value.standby`, and `smb_message_echoes`). */
export const NetworkMessagesValue = Type.Object({
  metadata: Type.Object({ phone_number_id: Type.String({ minLength: 1 }) }),
  contacts: Type.Optional(Type.Array(Type.Unknown())),
  messages: Type.Optional(Type.Array(Type.Unknown())),
  statuses: Type.Optional(Type.Array(Type.Unknown())),
  errors: Type.Optional(Type.Array(Type.Unknown())),
  standby: Type.Optional(Type.Object({
    messages: Type.Optional(Type.Array(Type.Unknown())),
    statuses: Type.Optional(Type.Array(Type.Unknown())),
    message_echoes: Type.Optional(Type.Array(Type.Unknown())),
  })),
  message_echoes: Type.Optional(Type.Array(Type.Unknown())),
});

const UnixSeconds = Type.String({ pattern: '^[0-9]{1,16}$', description: 'unix seconds (milliseconds from 10^12 on)' });

/** An inbound message: only what every type has is required; `context`, `errors` and the type's own object are read leniently. */
export const NetworkInboundMessage = Type.Object({
  id: Type.String({ minLength: 1 }),
  // A phone number, or (older shapes) a BSUID; absent or empty for a user without a shared number (`from_user_id` then).
  from: Type.Optional(Type.String()),
  timestamp: UnixSeconds,
  type: Type.String({ minLength: 1 }),
});
export type NetworkInboundMessage = Static<typeof NetworkInboundMessage> & Record<string, unknown>;

/** A status of an outbound message (`sent`, `delivered`, `read`, `failed` with `errors` …). */
export const NetworkStatus = Type.Object({
  id: Type.String({ minLength: 1 }),
  status: Type.String({ minLength: 1, maxLength: 64 }),
  timestamp: UnixSeconds,
});
export type NetworkStatus = Static<typeof NetworkStatus> & Record<string, unknown>;

/** What the business sent elsewhere than through this API (the network's agent, the phone app): like a message, `to` the customer. */
export const NetworkEcho = Type.Object({
  id: Type.String({ minLength: 1 }),
  timestamp: UnixSeconds,
  type: Type.String({ minLength: 1 }),
});
export type NetworkEcho = Static<typeof NetworkEcho> & Record<string, unknown>;

/** A `messages` callback as the network sends it (the sandbox builds these): the schemas above and the fields around them. */
export type NetworkCallbackValue = Static<typeof NetworkMessagesValue> & {
  messaging_product: string;
  metadata: { display_phone_number: string };
  contacts?: { profile: { name?: string; username?: string }; wa_id?: string; user_id?: string; parent_user_id?: string }[];
  messages?: NetworkInboundMessage[];
  statuses?: NetworkStatus[];
};
export type NetworkCallback = Static<typeof NetworkEnvelope> & {
  object: string;
  entry: (Static<typeof NetworkEntry> & { id: string; changes: (Static<typeof NetworkChange> & { value: NetworkCallbackValue })[] })[];
};
