// Schemas of queued and scheduled sends: the send_at/expires_at body fields, the 202 answer, the batch and cancel.
import { Type, type Static } from '@sinclair/typebox';
import { ErrorResponse, Nullable, Timestamp } from './common';
import { Message } from './conversations';

const When = (description: string) => Type.Optional(Type.String({ format: 'date-time', description, examples: ['2026-12-01T09:00:00Z'] }));

/** Body fields of send and send2 that queue the message instead of sending it at once. */
export const QueueFields = {
  send_at: When('Queue the message and send it at this time (ISO 8601, at most 30 days ahead): answered 202 `scheduled`'),
  expires_at: When('Queue the message; if it is still waiting at this time it fails with error code EXPIRED and its credit is refunded'),
};

export const QueueHeaders = Type.Object({
  prefer: Type.Optional(Type.String({ maxLength: 256, description: '`respond-async`: queue the message (202 `queued`) instead of sending it while the request waits' })),
});

export const QueuedMessage = Type.Composite([Message, Type.Object({
  send_at: Timestamp,
  expires_at: Nullable(Timestamp),
  credits_remaining: Type.Integer(),
})], { title: 'QueuedMessage', description: 'The stored message (status `queued` or `scheduled`), when it is due, when it expires, and the credits left this month' });

export const BatchBody = Type.Object({
  messages: Type.Array(Type.Object({}, {
    additionalProperties: true,
    description: 'A send body or a send2 body (told apart by `template_name`), with send_at, expires_at and an `idempotency_key` of its own',
  }), { minItems: 1, maxItems: 1000 }),
  token: Type.Optional(Type.String({ maxLength: 4096, description: 'JWT, when not sent as a header or cookie' })),
}, {
  additionalProperties: false,
  examples: [{ messages: [
    { to: '15551234567', type: 'text', text: { body: 'Your order shipped' }, idempotency_key: 'order-42-shipped' },
    { to: '15557654321', template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: '42', send_at: '2026-12-01T09:00:00Z' },
  ] }],
});
export type BatchBody = Static<typeof BatchBody>;

export const BatchResult = Type.Object({
  index: Type.Integer(),
  status: Type.Integer({ description: '202 when queued; else the status the item alone would have been answered' }),
  message: Type.Optional(QueuedMessage),
  error: Type.Optional(ErrorResponse),
});
export const BatchAnswer = Type.Object({ results: Type.Array(BatchResult) }, { title: 'BatchAnswer' });
export const IdempotencyKeyField = Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Same key and item within 24 h: the first answer again' }));
