// Our webhook endpoint's own schemas: the verification handshake query and the acknowledgement (the
// callback envelope is the network's wire format: schemas/network.ts).
import { Type } from '@sinclair/typebox';

/** GET handshake. Fastify's query parser keeps dotted names flat (`hub.mode`), so they are plain keys here. */
export const VerifyQuery = Type.Object({
  'hub.mode': Type.String({ minLength: 1, description: 'Always `subscribe`' }),
  'hub.verify_token': Type.String({ minLength: 1, description: 'Must equal MESSAGING_VERIFY_TOKEN' }),
  'hub.challenge': Type.String({ minLength: 1, description: 'Echoed back as text/plain' }),
});

export const WebhookAck = Type.Object({ status: Type.Literal('received') }, { description: 'Stored durably (and processed)' });
