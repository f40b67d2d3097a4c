// Callback bytes as the network posts them, and their X-Hub-Signature-256 (the sandbox never imports the gateway's webhook code).
import { createHmac } from 'node:crypto';

/**
 * JSON text with every character outside printable ASCII written as `\uXXXX` (lowercase hex, UTF-16 code units:
 * an emoji becomes its surrogate pair). The network posts callbacks in this form and signs these bytes.
 */
export const escapeNonAscii = (json: string): string =>
  json.replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));

/** `sha256=<hex>` of HMAC-SHA256(body, secret), the header value the network sends. */
export const signBody = (body: string, secret: string): string => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
