// The messaging network's wire format (Cloud API): send request, its answers, the error envelope, webhook envelopes.
import { Type, type Static } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;

// --- POST /{phone_number_id}/messages ---------------------------------------------------------

const SendCommon = {
  messaging_product: Type.String(),
  recipient_type: Type.Literal('individual'),
  to: Type.String({ minLength: 1 }),
};

export const NetworkTextRequest = Type.Object({
  ...SendCommon,
  type: Type.Literal('text'),
  text: Type.Object({ body: Type.String({ minLength: 1 }) }, strict),
}, strict);

export const NetworkTemplateRequest = Type.Object({
  ...SendCommon,
  type: Type.Literal('template'),
  template: Type.Object({
    name: Type.String({ minLength: 1 }),
    language: Type.Object({ code: Type.String({ minLength: 1 }) }, strict),
    components: Type.Array(Type.Object({
      type: Type.Literal('body'),
      parameters: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1 }) }, strict)),
    }, strict)),
  }, strict),
}, strict);

export const NetworkSendRequest = Type.Union([NetworkTextRequest, NetworkTemplateRequest]);
export type NetworkSendRequest = Static<typeof NetworkSendRequest>;

/** Success: `messages[0].id` is the wamid; `contacts[0].wa_id` the recipient as the network knows it. */
export const NetworkSendAnswer = Type.Object({
  messaging_product: Type.String(),
  contacts: Type.Optional(Type.Array(Type.Object({ input: Type.String(), wa_id: Type.String({ minLength: 1 }) }))),
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

// --- Webhook callbacks (the subset the sandbox emits) -----------------------------------------

export const NetworkStatus = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('sent'), Type.Literal('delivered'), Type.Literal('read'), Type.Literal('failed')]),
  timestamp: Type.String({ description: 'unix seconds' }),
  recipient_id: Type.String(),
  conversation: Type.Optional(Type.Object({
    id: Type.String(),
    expiration_timestamp: Type.Optional(Type.String()),
    origin: Type.Object({ type: Type.String() }),
  })),
  pricing: Type.Optional(Type.Object({ billable: Type.Boolean(), pricing_model: Type.String(), category: Type.String() })),
  errors: Type.Optional(Type.Array(Type.Object({
    code: Type.Integer(),
    title: Type.String(),
    message: Type.Optional(Type.String()),
    error_data: Type.Optional(Type.Object({ details: Type.String() })),
  }))),
});
export type NetworkStatus = Static<typeof NetworkStatus>;

export const NetworkInboundText = Type.Object({
  from: Type.String(),
  id: Type.String(),
  timestamp: Type.String({ description: 'unix seconds' }),
  text: Type.Object({ body: Type.String() }),
  type: Type.Literal('text'),
});
export type NetworkInboundText = Static<typeof NetworkInboundText>;

export const NetworkChangeValue = Type.Object({
  messaging_product: Type.String(),
  metadata: Type.Object({ display_phone_number: Type.String(), phone_number_id: Type.String() }),
  contacts: Type.Optional(Type.Array(Type.Object({ profile: Type.Object({ name: Type.String() }), wa_id: Type.String() }))),
  messages: Type.Optional(Type.Array(NetworkInboundText)),
  statuses: Type.Optional(Type.Array(NetworkStatus)),
});
export type NetworkChangeValue = Static<typeof NetworkChangeValue>;

export const NetworkEnvelope = Type.Object({
  object: Type.String(),
  entry: Type.Array(Type.Object({
    id: Type.String(),
    changes: Type.Array(Type.Object({ value: NetworkChangeValue, field: Type.String() })),
  })),
});
export type NetworkEnvelope = Static<typeof NetworkEnvelope>;
