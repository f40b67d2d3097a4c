// The sandbox's own callback signature (it never imports the gateway's webhook code): X-Hub-Signature-256.
import { createHmac } from 'node:crypto';

/** `sha256=<hex>` of HMAC-SHA256(body, secret), the header value the network sends. */
export const signBody = (body: string, secret: string): string => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
