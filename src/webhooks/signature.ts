// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const CHUNK = 64 * 1024;
const HEX = Buffer.from('0123456789abcdef', 'ascii');

const hmac = (body: Buffer | string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends (and the sandbox). */
export const signBody = (body: Buffer | string, secret: string): string => 'sha256=' + hmac(body, secret).toString('hex');

/**
 * Four lowercase hex digits of each UTF-16 unit, as the bytes of one little-endian 32-bit word (256 KiB, built at the
 * first non-ASCII body): one table read and two stores per escaped character instead of four reads and six stores.
 */
let hexWords: Uint32Array | undefined;
function hexWordsTable(): Uint32Array {
  if (hexWords) return hexWords;
  hexWords = new Uint32Array(0x10000);
  for (let u = 0; u < 0x10000; u++) {
    hexWords[u] = (HEX[u >> 12]! | (HEX[(u >> 8) & 15]! << 8) | (HEX[(u >> 4) & 15]! << 16) | (HEX[u & 15]! << 24)) >>> 0;
  }
  return hexWords;
}
/** `\u` as a little-endian 16-bit word. */
const BACKSLASH_U = 0x755c;

/** Writes `\uXXXX` at `at`; where the next byte goes (a closure over the write position would keep it in a heap slot, not a register). */
function writeEscape(words: DataView, at: number, hexWord: number): number {
  words.setUint16(at, BACKSLASH_U, true);
  words.setUint32(at + 2, hexWord, true);
  return at + 6;
}

/**
 * HMAC of the body as the network documents signing it, "an escaped unicode version of the payload": every
 * non-ASCII character as `\uXXXX` (lowercase hex, UTF-16 units, so an emoji is a surrogate pair), of the text the
 * webhook parses (`toString('utf8')`: invalid UTF-8 becomes U+FFFD, so such a body is first re-encoded from that
 * text). The UTF-8 sequences are decoded in place and written into one reused chunk: no string per character and no
 * UTF-16 copy of the body (on a 3 MB body either costs more than the hashing).
 */
export function escapedFormHmac(body: Buffer, secret: string): Buffer {
  const bytes = isUtf8(body) ? body : Buffer.from(body.toString('utf8'), 'utf8');
  const hex = hexWordsTable();
  const mac = createHmac('sha256', secret);
  const out = Buffer.allocUnsafe(CHUNK);
  const words = new DataView(out.buffer, out.byteOffset, out.byteLength);
  // Room for the longest step: a 4-byte sequence is two escapes.
  const limit = CHUNK - 12;
  let used = 0;
  // Valid UTF-8 (checked above): the continuation bytes are there and well formed.
  for (let i = 0; i < bytes.length;) {
    if (used > limit) {
      mac.update(out.subarray(0, used));
      used = 0;
    }
    const b = bytes[i]!;
    if (b < 0x80) {
      out[used++] = b;
      i += 1;
      continue;
    }
    let unit: number;
    if (b < 0xe0) {
      unit = ((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f);
      i += 2;
    } else if (b < 0xf0) {
      unit = ((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f);
      i += 3;
    } else {
      // Above the 16-bit range: a surrogate pair, the high unit here and the low one below.
      const above = (((b & 0x07) << 18) | ((bytes[i + 1]! & 0x3f) << 12) | ((bytes[i + 2]! & 0x3f) << 6) | (bytes[i + 3]! & 0x3f)) - 0x10000;
      used = writeEscape(words, used, hex[0xd800 + (above >> 10)]!);
      unit = 0xdc00 + (above & 0x3ff);
      i += 4;
    }
    used = writeEscape(words, used, hex[unit]!);
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
