// The network's webhook wire format: verification query, callback envelope, message and status items.
import { Type, type Static } from '@sinclair/typebox';

/** GET handshake. Fastify's query parser keeps dotted names flat (`hub.mode`), so they are plain keys here. */
export const VerifyQuery = Type.Object({
  'hub.mode': Type.String({ minLength: 1, description: 'Always `subscribe`' }),
  'hub.verify_token': Type.String({ minLength: 1, description: 'Must equal MESSAGING_VERIFY_TOKEN' }),
  'hub.challenge': Type.String({ minLength: 1, description: 'Echoed back as text/plain' }),
});
export type VerifyQuery = Static<typeof VerifyQuery>;

export const WebhookAck = Type.Object({ status: Type.Literal('received') }, { description: 'Stored durably (and processed)' });

// The envelope is checked level by level, each item on its own: one bad item must not hide the others.
export const Envelope = Type.Object({ entry: Type.Array(Type.Unknown()) });
export const Entry = Type.Object({ changes: Type.Array(Type.Unknown()) });
export const Change = Type.Object({ field: Type.String(), value: Type.Unknown() });

/** `value` of a change with `field: "messages"`. */
export const MessagesValue = Type.Object({
  metadata: Type.Object({ phone_number_id: Type.String({ minLength: 1 }) }),
  contacts: Type.Optional(Type.Array(Type.Unknown())),
  messages: Type.Optional(Type.Array(Type.Unknown())),
  statuses: Type.Optional(Type.Array(Type.Unknown())),
  errors: Type.Optional(Type.Array(Type.Unknown())),
});
export type MessagesValue = Static<typeof MessagesValue>;

/** Unix seconds, as a string (the network's format). */
const UnixSeconds = Type.String({ pattern: '^[0-9]{1,11}$' });

/** An inbound message: only what every type has is required; `context`, `errors` and the type's own object are read leniently. */
export const InboundMessage = Type.Object({
  id: Type.String({ minLength: 1 }),
  from: Type.String({ minLength: 1 }),
  timestamp: UnixSeconds,
  type: Type.String({ minLength: 1 }),
});
export type InboundMessage = Static<typeof InboundMessage> & Record<string, unknown>;

export const Status = Type.Object({
  id: Type.String({ minLength: 1 }),
  status: Type.String(),
  timestamp: UnixSeconds,
});
export type Status = Static<typeof Status> & Record<string, unknown>;

