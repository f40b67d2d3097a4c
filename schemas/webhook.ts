// Our webhook endpoints' own schemas: the verification handshake query, the acknowledgement, and the stored
// events administrators list and replay (the callback envelope is the network's wire format: schemas/network.ts).
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RequestBody, Timestamp } from './common';
import { MESSAGING_PRODUCT, WEBHOOK_OBJECT } from './network';

/** GET handshake. Fastify's query parser keeps dotted names flat (`hub.mode`), so they are plain keys here. */
export const VerifyQuery = Type.Object({
  'hub.mode': Type.String({ minLength: 1, description: 'Always `subscribe`' }),
  'hub.verify_token': Type.String({ minLength: 1, description: 'Must equal MESSAGING_VERIFY_TOKEN' }),
  'hub.challenge': Type.String({ minLength: 1, description: 'Echoed back as text/plain' }),
});

/**
 * The callback body as the network sends it, for the document only: the route checks the signature over the raw
 * bytes first, then reads the envelope leniently, item by item (schemas/network.ts), so nothing here is enforced.
 */
export const WebhookCallback = Type.Object({
  object: Type.String({ description: "The network's account kind" }),
  entry: Type.Array(Type.Object({
    id: Type.String({ description: 'Business account id' }),
    changes: Type.Array(Type.Object({
      field: Type.String({ description: '`messages` carries inbound messages and statuses of sent ones; other fields are stored and skipped' }),
      value: Type.Object({}, { additionalProperties: true, description: 'For `messages`: metadata.phone_number_id (routes it to a user), contacts, messages, statuses, errors' }),
    })),
  })),
}, { additionalProperties: true, description: 'A callback of the messaging network, signed with X-Hub-Signature-256 over its raw bytes' });

export const SignatureHeaders = Type.Object({
  'x-hub-signature-256': Type.Optional(Type.String({
    pattern: '^sha256=[0-9a-fA-F]{64}$', examples: ['sha256=' + '0'.repeat(64)],
    description: '`sha256=` and the hex HMAC-SHA256 of the raw body with the app secret. Required while MESSAGING_APP_SECRET is set (401 otherwise); unset, callbacks are refused (503) unless unsigned ones are explicitly allowed',
  })),
});

export const WebhookAck = Type.Object({ status: Type.Literal('received') }, { description: 'Stored durably (and processed)' });

// --- Stored callbacks, for administrators (failed and dead events, replay after a fix) ---------------

export const WebhookEventState = Type.Unsafe<'pending' | 'processed' | 'failed' | 'dead'>(Type.String({
  enum: ['pending', 'processed', 'failed', 'dead'],
  description: '`failed`: processed again automatically (at start-up and every few minutes); `dead`: failed 5 times, waits for a replay',
}));

/** A stored callback without its raw body (up to 3 MB each): its size is given instead. */
export const WebhookEvent = Type.Object({
  id: Type.Integer(),
  state: WebhookEventState,
  attempts: Type.Integer({ description: 'Processing runs so far, the first one (in its request) included' }),
  received_at: Timestamp,
  processed_at: Nullable({ ...Timestamp, description: 'Time of the last processing run' }),
  error: Nullable(Type.String({ description: 'Why processing failed and the items skipped, one per line: the first 20 and a count' })),
  raw_bytes: Type.Integer({ description: 'Size of the raw callback as received, in bytes' }),
});

export const WebhookEventsQuery = Type.Object({
  state: Type.Optional(Type.Unsafe<'failed' | 'dead'>(Type.String({ enum: ['failed', 'dead'], description: 'Only this state (default: both)' }))),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Events per page' }),
  before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Only events with a lower id (next page)' })),
}, { additionalProperties: false });
export type WebhookEventsQuery = Static<typeof WebhookEventsQuery>;

export const WebhookEventList = Type.Object({
  events: Type.Array(WebhookEvent, { description: 'Newest first' }),
  next_before_id: Nullable(Type.Integer({ description: '`before_id` of the next page; null on the last page' })),
});

/** The replay takes no body (an empty one, or only `token`). */
export const ReplayBody = Type.Union([RequestBody({}), Type.Null()], { examples: [{}] });

/** An inbound text message as the network delivers it: the request body example of the callback. */
export const CALLBACK_EXAMPLE = {
  object: WEBHOOK_OBJECT,
  entry: [{
    id: '102290129340398',
    changes: [{
      field: 'messages',
      value: {
        messaging_product: MESSAGING_PRODUCT,
        metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
        contacts: [{ profile: { name: 'Ana' }, wa_id: '15551234567' }],
        messages: [{ from: '15551234567', id: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=', timestamp: '1764000000', type: 'text', text: { body: 'Hello' } }],
      },
    }],
  }],
};
