// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends. */
export function signBody(body: Buffer | string, secret: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** True when `header` is the HMAC of exactly these bytes under `secret`. */
export function isValidSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  const hex = header === undefined ? undefined : SIGNATURE.exec(header)?.[1];
  if (hex === undefined) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}

/** Constant-time string equality, also when the lengths differ (both sides are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
