// Inbound media from the network: the lookup (GET /{media_id} -> a short-lived URL on whatever host) and the download
// of that URL with the token, streamed to a file with its size capped and its sha256 checked. Never throws.
import { createHash } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Agent, type Dispatcher } from 'undici';
import { NetworkMediaInfo } from '../../schemas/network';
import { parseRetryAfter } from './answers';
import { deadlines, errorCode } from './failures';
import { guardedLookup, refusedMediaUrl } from './media-url-policy';

export interface MediaClientOptions {
  baseUrl: string; timeoutMs: number; maxBytes: number;
  /** The clock an HTTP-date Retry-After is counted from: the one the queue schedules with. */
  now?: () => number;
}

/**
 * What to fetch: the callback's media id and sha256 (base64; null when it gave none). `admit` is asked, once the
 * lookup tells the size, whether the archive has room for it (false: nothing is downloaded, outcome `no_space`).
 */
export interface MediaRequest {
  mediaId: string; token: string; sha256: string | null; signal: AbortSignal;
  admit?: (fileSize: number) => boolean;
}

export type MediaOutcome =
  | { kind: 'stored'; size: number; mimeType: string }
  /** Worth another attempt later (timeout, connection, 5xx, 429): `detail` is for the record. */
  | { kind: 'retry'; detail: string; retryAfterMs?: number }
  /** Final at once: the bytes are not kept. */
  | { kind: 'final'; error: 'sha256_mismatch' | 'too_large' | 'lookup_refused' | 'download_refused' | 'url_refused'; detail: string }
  /** The archive's cap or the disk's floor leaves no room for it now: tried again later. */
  | { kind: 'no_space'; fileSize: number }
  /** The caller aborted (shutdown): nothing happened as far as the queue is concerned. */
  | { kind: 'aborted' };

const MAX_LOOKUP_BYTES = 64 * 1024;
const lookupCheck = TypeCompiler.Compile(NetworkMediaInfo);

/** Digest bytes of a sha256 in hex (the lookup's) or base64 (the callback's); null when it is neither. */
export function sha256Bytes(text: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 32 ? bytes : null;
}

/** 429 and 5xx are the network's "later"; any other refusal is final. */
function refused(status: number, stage: 'lookup' | 'download', retryAfter: string | string[] | undefined, now: number): MediaOutcome {
  const detail = `${stage}: HTTP ${status}`;
  if (status === 429 || status >= 500) {
    const seconds = parseRetryAfter(retryAfter, now);
    return { kind: 'retry', detail, ...(seconds ? { retryAfterMs: seconds * 1000 } : {}) };
  }
  return { kind: 'final', error: stage === 'lookup' ? 'lookup_refused' : 'download_refused', detail };
}

export function createMediaClient(options: MediaClientOptions) {
  const basePath = options.baseUrl.replace(/\/+$/, '');
  const { maxBytes, now = Date.now } = options;
  // An agent, not a pool: the download URL names a host of its own. Same deadlines as the send client.
  const limits = deadlines(options.timeoutMs);
  const agent = new Agent({ connections: 4, keepAliveTimeout: 10_000, ...limits, connect: { ...limits.connect, lookup: guardedLookup(options.baseUrl) } });
  function get(url: string, token: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const target = new URL(url);
    return agent.request({ origin: target.origin, path: target.pathname + target.search, method: 'GET', signal, headers: { authorization: `Bearer ${token}` } });
  }

  async function lookup(request: MediaRequest): Promise<NetworkMediaInfo | MediaOutcome> {
    const answer = await get(`${basePath}/${encodeURIComponent(request.mediaId)}`, request.token, request.signal);
    if (answer.statusCode < 200 || answer.statusCode > 299) {
      await answer.body.dump();
      return refused(answer.statusCode, 'lookup', answer.headers['retry-after'], now());
    }
    // Read up to MAX_LOOKUP_BYTES, never more: a huge or endless answer is cut off, not held.
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > MAX_LOOKUP_BYTES) {
        answer.body.destroy();
        return { kind: 'retry', detail: `lookup: answer over ${MAX_LOOKUP_BYTES} bytes` };
      }
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let info: unknown;
    try {
      info = JSON.parse(text);
    } catch {
      info = undefined;
    }
    if (!lookupCheck.Check(info) || !/^https?:\/\//i.test(info.url)) return { kind: 'retry', detail: 'lookup: not a media answer' };
    return info;
  }

  /** Streams the body into `path` (created 0600), hashing and counting; over the limit it stops reading at once. */
  async function download(info: NetworkMediaInfo, request: MediaRequest, path: string): Promise<MediaOutcome> {
    const answer = await get(info.url, request.token, request.signal);
    if (answer.statusCode < 200 || answer.statusCode > 299) {
      await answer.body.dump();
      return refused(answer.statusCode, 'download', answer.headers['retry-after'], now());
    }
    const declared = Number(answer.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      answer.body.destroy();
      return { kind: 'final', error: 'too_large', detail: `download: ${declared} bytes announced` };
    }
    const hash = createHash('sha256');
    let size = 0;
    const file = await open(path, 'wx', 0o600);
    try {
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          answer.body.destroy();
          return { kind: 'final', error: 'too_large', detail: `download: over ${maxBytes} bytes` };
        }
        hash.update(chunk);
        await file.write(chunk);
      }
      await file.sync();
    } finally {
      await file.close();
    }
    const digest = hash.digest();
    const expected = [request.sha256, info.sha256].filter((s): s is string => s !== null).map(sha256Bytes);
    if (expected.some((bytes) => bytes === null || !bytes.equals(digest))) {
      return { kind: 'final', error: 'sha256_mismatch', detail: `download: sha256 ${digest.toString('hex')} is not the announced one` };
    }
    return { kind: 'stored', size, mimeType: info.mime_type };
  }

  return {
    /**
     * Looks the media up and downloads it into `path` (which must not exist). On any outcome but `stored` the
     * partial file is removed.
     */
    async fetchTo(request: MediaRequest, path: string): Promise<MediaOutcome> {
      let outcome: MediaOutcome;
      try {
        const info = await lookup(request);
        if ('kind' in info) outcome = info;
        else if (info.file_size > maxBytes) outcome = { kind: 'final', error: 'too_large', detail: `lookup: ${info.file_size} bytes` };
        else {
          const why = await refusedMediaUrl(info.url, options.baseUrl);
          if (why !== null) outcome = { kind: 'final', error: 'url_refused', detail: `lookup: ${why}` };
          else if (request.admit && !request.admit(info.file_size)) outcome = { kind: 'no_space', fileSize: info.file_size };
          else outcome = await download(info, request, path);
        }
      } catch (error) {
        outcome = request.signal.aborted ? { kind: 'aborted' } : { kind: 'retry', detail: `network: ${errorCode(error)}` };
      }
      if (outcome.kind !== 'stored') await unlink(path).catch(() => undefined);
      return outcome;
    },
    close: (): Promise<void> => agent.close(),
  };
}
export type MediaClient = ReturnType<typeof createMediaClient>;
