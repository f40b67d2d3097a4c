// Pure checks of the webhook's secrets: the X-Hub-Signature-256 HMAC and the verify token, in constant time.
import { isAscii } from 'node:buffer';
import { createHash, createHmac, timingSafeEqual, type Hmac } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const CHUNK = 64 * 1024;
const HEX = Buffer.from('0123456789abcdef', 'ascii');

const hmac = (body: Buffer | string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** `sha256=<hex>` of HMAC-SHA256(body, secret): the header value the network sends (and the sandbox). */
export const signBody = (body: Buffer | string, secret: string): string => 'sha256=' + hmac(body, secret).toString('hex');

/** Feeds an HMAC with bytes through one reused chunk buffer: no string per character, no copy of the whole body. */
class ChunkedFeed {
  private readonly out = Buffer.allocUnsafe(CHUNK);
  private used = 0;
  constructor(readonly mac: Hmac) {}
  bytes(body: Buffer, start: number, end: number): void {
    if (end - start >= CHUNK) { this.flush(); this.mac.update(body.subarray(start, end)); return; }
    if (this.used + (end - start) > CHUNK) this.flush();
    body.copy(this.out, this.used, start, end);
    this.used += end - start;
  }
  /** One UTF-16 unit as `\uxxxx` (lowercase hex). */
  unit(u: number): void {
    if (this.used + 6 > CHUNK) this.flush();
    const o = this.out;
    const i = this.used;
    o[i] = 0x5c; o[i + 1] = 0x75;
    o[i + 2] = HEX[(u >> 12) & 15]!; o[i + 3] = HEX[(u >> 8) & 15]!; o[i + 4] = HEX[(u >> 4) & 15]!; o[i + 5] = HEX[u & 15]!;
    this.used = i + 6;
  }
  codePoint(cp: number): void {
    if (cp < 0x10000) { this.unit(cp); return; }
    const v = cp - 0x10000;
    this.unit(0xd800 | (v >> 10));
    this.unit(0xdc00 | (v & 0x3ff));
  }
  flush(): void {
    if (this.used > 0) this.mac.update(this.out.subarray(0, this.used));
    this.used = 0;
  }
}

/**
 * HMAC of the body as the network documents signing it, "an escaped unicode version of the payload": every
 * non-ASCII character as `\uXXXX` (lowercase hex, UTF-16 units, so an emoji is a surrogate pair). One pass over the
 * bytes, decoding UTF-8 by hand. Invalid UTF-8 decodes as U+FFFD per maximal subpart (the WHATWG decoder, exactly
 * what `buffer.toString('utf8')` gives the webhook before JSON.parse), so the escaped form is always that of the
 * text the gateway parses.
 */
export function escapedFormHmac(body: Buffer, secret: string): Buffer {
  const feed = new ChunkedFeed(createHmac('sha256', secret));
  const n = body.length;
  let runStart = 0;
  let i = 0;
  while (i < n) {
    const b = body[i]!;
    if (b < 0x80) { i += 1; continue; }
    feed.bytes(body, runStart, i);
    let needed = 0;
    let cp = 0;
    let lower = 0x80;
    let upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) { needed = 1; cp = b & 0x1f; }
    else if (b >= 0xe0 && b <= 0xef) { needed = 2; cp = b & 0x0f; if (b === 0xe0) lower = 0xa0; if (b === 0xed) upper = 0x9f; }
    else if (b >= 0xf0 && b <= 0xf4) { needed = 3; cp = b & 0x07; if (b === 0xf0) lower = 0x90; if (b === 0xf4) upper = 0x8f; }
    i += 1;
    let seen = 0;
    while (seen < needed && i < n) {
      const c = body[i]!;
      if (c < lower || c > upper) break; // this byte is not consumed: it starts the next character
      cp = (cp << 6) | (c & 0x3f);
      lower = 0x80; upper = 0xbf;
      seen += 1; i += 1;
    }
    feed.codePoint(needed > 0 && seen === needed ? cp : 0xfffd);
    runStart = i;
  }
  feed.bytes(body, runStart, n);
  feed.flush();
  return feed.mac.digest();
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
