// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

const hmac = (body: Buffer | string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends (and the sandbox). */
export const signBody = (body: Buffer | string, secret: string): string => 'sha256=' + hmac(body, secret).toString('hex');

/**
 * The body as the network documents signing it, "an escaped unicode version of the payload": every non-ASCII
 * character as `\uXXXX` (lowercase hex, UTF-16 units); null when the body is ASCII already.
 */
function escapedForm(body: Buffer): string | null {
  if (!body.some((byte) => byte > 0x7f)) return null;
  return body.toString('utf8').replace(/[^\x00-\x7f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** True when `header` is the HMAC under `secret` of these bytes, or of these bytes with non-ASCII escaped. */
export function isValidSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  const hex = header === undefined ? undefined : SIGNATURE.exec(header)?.[1];
  if (hex === undefined) return false;
  const given = Buffer.from(hex, 'hex');
  if (timingSafeEqual(given, hmac(body, secret))) return true;
  const escaped = escapedForm(body);
  return escaped !== null && timingSafeEqual(given, hmac(escaped, secret));
}

/** Constant-time string equality, also when the lengths differ (both sides are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
