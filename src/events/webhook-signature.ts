// Standard Webhooks signing: `whsec_` secrets (base64 of random bytes) and `v1,<base64 HMAC-SHA256>` over
// "{webhook-id}.{webhook-timestamp}.{body}", as receivers' libraries verify it.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export const newEndpointSecret = (): string => SECRET_PREFIX + randomBytes(24).toString('base64');

/** The webhook-signature header value for one delivery. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
