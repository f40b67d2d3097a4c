// Schemas of the send endpoints (SPEC §5): request bodies, the 201 answer, and errors carrying `upstream`.
import { Type, type Static } from '@sinclair/typebox';
import { ErrorResponse, Nullable, RequestBody, Timestamp } from './common';

export const PhoneNumber = Type.String({
  pattern: '^[1-9][0-9]{6,14}$', description: 'Recipient: 7–15 digits, no leading + or 0', examples: ['15551234567'],
});

export const SendTextBody = RequestBody({
  to: PhoneNumber,
  type: Type.Literal('text'),
  text: Type.Object({ body: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
}, { examples: [{ to: '15551234567', type: 'text', text: { body: 'Your order has shipped' } }] });
export type SendTextBody = Static<typeof SendTextBody>;

const TemplateParam = Type.String({ minLength: 1, maxLength: 1024 });

export const SendTemplateBody = RequestBody({
  to: PhoneNumber,
  template_name: Type.String({ pattern: '^[a-z0-9_]{1,512}$', examples: ['order_update'] }),
  language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', description: 'Language code such as en or en_US' }),
  param1: TemplateParam,
  param2: TemplateParam,
  param3: Type.Optional(TemplateParam),
  param4: Type.Optional(TemplateParam),
  param5: Type.Optional(TemplateParam),
}, {
  description: 'param1…param5 become, in order, the text parameters of the template body: no gaps (param4 needs param3, param5 needs param4)',
  examples: [{ to: '15551234567', template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: 'A-1042' }],
  dependencies: { param4: ['param3'], param5: ['param4'] },
});
export type SendTemplateBody = Static<typeof SendTemplateBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1, maxLength: 128, description: 'Same key and body within 24 h: the first answer again, no new send',
  })),
});

export const SendAnswer = Type.Object({
  id: Type.Integer(),
  wamid: Type.String({ description: "The network's message id" }),
  to: Type.String({ description: 'The number as typed' }),
  type: Type.Union([Type.Literal('text'), Type.Literal('template')]),
  status: Type.Literal('accepted'),
  credits_remaining: Type.Integer(),
  created_at: Timestamp,
});

export const Upstream = Type.Object({
  http_status: Type.Integer(),
  code: Nullable(Type.Integer()),
  subcode: Nullable(Type.Integer()),
  message: Type.String(),
  details: Nullable(Type.String()),
  fbtrace_id: Nullable(Type.String()),
}, { description: "The messaging network's own error" });

/** 502 MESSAGING_REJECTED and 429 MESSAGING_RATE_LIMITED. */
export const UpstreamErrorResponse = Type.Composite([ErrorResponse, Type.Object({ upstream: Upstream })], {
  title: 'UpstreamErrorResponse', description: "The error shape with the messaging network's own error in `upstream`",
});

/** 502: MESSAGING_REJECTED (with `upstream`) or MESSAGING_OUTCOME_UNKNOWN (with the message `id` of the first request). */
export const SendBadGatewayResponse = Type.Composite([ErrorResponse, Type.Object({
  upstream: Type.Optional(Upstream),
  id: Type.Optional(Nullable(Type.Integer({ description: 'MESSAGING_OUTCOME_UNKNOWN: the message the first request stored' }))),
  wamid: Type.Optional(Type.String()),
  sent: Type.Optional(Type.Boolean()),
})], { additionalProperties: true, title: 'SendBadGatewayResponse', description: "The error shape with the network's error in `upstream`, or the stored message `id` when the outcome of a first request with this key is unknown" });

/** 503 STORAGE_UNAVAILABLE: after the network accepted the message, `sent: true` with its `id` and `wamid` (do not send again). */
export const SendStorageResponse = Type.Composite([ErrorResponse, Type.Object({
  id: Type.Optional(Type.Integer()),
  wamid: Type.Optional(Type.String()),
  sent: Type.Optional(Type.Boolean()),
})], { additionalProperties: true, title: 'SendStorageResponse', description: 'The error shape; when the network accepted the message but storing that failed, `sent: true` with its `id` and `wamid`: do not send it again' });
