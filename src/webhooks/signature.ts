// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { isAscii, isUtf8, transcode } from 'node:buffer';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const CHUNK = 64 * 1024;
const HEX = Buffer.from('0123456789abcdef', 'ascii');

const hmac = (body: Buffer | string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends (and the sandbox). */
export const signBody = (body: Buffer | string, secret: string): string => 'sha256=' + hmac(body, secret).toString('hex');

/**
 * The body's UTF-16 code units as UTF-16LE bytes, decoded as the webhook decodes it before JSON.parse
 * (`toString('utf8')`: invalid UTF-8 becomes U+FFFD). Valid UTF-8, the usual case, goes through ICU's transcoder, ten
 * times faster than building the string; both decoders give the same units for it. Invalid UTF-8 takes the
 * string's own decoding, so the escaped form is always that of the text the gateway parses.
 */
function utf16Units(body: Buffer): Buffer {
  if (isUtf8(body)) {
    try {
      return transcode(body, 'utf8', 'utf16le');
    } catch {
      // A Node built without ICU has no transcoder: the string's way below.
    }
  }
  return Buffer.from(body.toString('utf8'), 'utf16le');
}

/**
 * HMAC of the body as the network documents signing it, "an escaped unicode version of the payload": every
 * non-ASCII character as `\uXXXX` (lowercase hex, UTF-16 units, so an emoji is a surrogate pair). The units are
 * written into one reused chunk (no string per character: on a 3 MB body that costs more than the hashing).
 */
export function escapedFormHmac(body: Buffer, secret: string): Buffer {
  const units = utf16Units(body);
  const mac = createHmac('sha256', secret);
  const out = Buffer.allocUnsafe(CHUNK);
  const limit = CHUNK - 6;
  let used = 0;
  for (let i = 0; i < units.length; i += 2) {
    if (used > limit) {
      mac.update(out.subarray(0, used));
      used = 0;
    }
    const u = units[i]! | (units[i + 1]! << 8);
    if (u < 0x80) {
      out[used++] = u;
      continue;
    }
    out[used] = 0x5c; out[used + 1] = 0x75;
    out[used + 2] = HEX[u >> 12]!; out[used + 3] = HEX[(u >> 8) & 15]!; out[used + 4] = HEX[(u >> 4) & 15]!; out[used + 5] = HEX[u & 15]!;
    used += 6;
  }
  mac.update(out.subarray(0, used));
  return mac.digest();
}

/** True when `header` is the HMAC under `secret` of these bytes, or of these bytes with non-ASCII escaped. */
export function isValidSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  const hex = header === undefined ? undefined : SIGNATURE.exec(header)?.[1];
  if (hex === undefined) return false;
  const given = Buffer.from(hex, 'hex');
  if (timingSafeEqual(given, hmac(body, secret))) return true;
  return !isAscii(body) && timingSafeEqual(given, escapedFormHmac(body, secret));
}

/** Constant-time string equality, also when the lengths differ (both sides are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
