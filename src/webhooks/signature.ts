// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

const hmac = (body: Buffer | string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends (and the sandbox). */
export const signBody = (body: Buffer | string, secret: string): string => 'sha256=' + hmac(body, secret).toString('hex');

/** True when `header` is the HMAC of exactly these bytes under `secret`. */
export function isValidSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  const hex = header === undefined ? undefined : SIGNATURE.exec(header)?.[1];
  if (hex === undefined) return false;
  return timingSafeEqual(Buffer.from(hex, 'hex'), hmac(body, secret));
}

/** Constant-time string equality, also when the lengths differ (both sides are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
