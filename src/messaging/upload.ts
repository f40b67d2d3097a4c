// Uploading a file to the network's media store (POST /{phone_number_id}/media, multipart), streamed through: never held whole.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { MESSAGING_PRODUCT, NetworkMediaUploadAnswer } from '../../schemas/network';
import { Value } from '@sinclair/typebox/value';
import { parseJsonOrUndefined } from '../support/loose-json';
import { readAnswer } from './answers';
import type { MessagingAccount, SendResult } from './client';
import { deadlines, errorCode, TIMEOUTS } from './failures';

export interface UploadFile { stream: AsyncIterable<Buffer>; mimeType: string; filename: string; limit: number }
export type UploadResult =
  | { kind: 'uploaded'; id: string; size: number }
  | { kind: 'too_large' | 'empty' }
  | Exclude<SendResult, { kind: 'accepted' }>;

class StopUpload extends Error {
  constructor(readonly reason: 'too_large' | 'empty') {
    super(reason);
  }
}

/** The file stream itself failed (a multipart body cut off before its closing boundary): the caller's error, not the network's. */
class SourceFailed extends Error {
  constructor(readonly error: unknown) {
    super('the file stream failed');
  }
}

/** The file's chunks, its own failure marked so it is not taken for the network's. */
async function* marked(stream: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield* stream;
  } catch (error) {
    throw new SourceFailed(error);
  }
}

/** A filename safe inside a quoted multipart header: no quotes, backslashes or control characters. */
const headerSafe = (name: string): string => name.replace(/["\\\u0000-\u001f\u007f]/g, '_').slice(0, 240) || 'file';

export function createMediaUploader(options: { baseUrl: string; timeoutMs: number; log?: { warn(details: object, message: string): void } }) {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  // Its own pool: a long upload must not hold a connection the sends need. Enough connections that users' uploads
  // (at most 2 each, none trickling: see services/upload-fairness.ts) never queue behind one another's.
  const pool = new Pool(base.origin, { connections: 64, ...deadlines(options.timeoutMs), maxResponseSize: 64 * 1024 });

  return {
    /**
     * Streams `file` to the account's media store; stops (and the network gets no complete file) past `file.limit` bytes
     * or when the file stream fails. Throws only that stream's own error, for the caller to answer; network failures are results.
     */
    async upload(account: MessagingAccount, file: UploadFile): Promise<UploadResult> {
      const boundary = `gateway-${randomBytes(16).toString('hex')}`;
      const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      const head = field('messaging_product', MESSAGING_PRODUCT) + field('type', file.mimeType)
        + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${headerSafe(file.filename)}"\r\nContent-Type: ${file.mimeType}\r\n\r\n`;
      let size = 0;
      async function* body() {
        yield Buffer.from(head);
        for await (const chunk of marked(file.stream)) {
          size += chunk.length;
          if (size > file.limit) throw new StopUpload('too_large');
          yield chunk;
        }
        if (size === 0) throw new StopUpload('empty');
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      }
      const path = `${basePath}/${encodeURIComponent(account.phoneNumberId)}/media`;
      try {
        const answer = await pool.request({
          method: 'POST', path, body: Readable.from(body()),
          headers: { authorization: `Bearer ${account.token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' },
        });
        const text = await answer.body.text();
        const json = parseJsonOrUndefined(text);
        if (answer.statusCode >= 200 && answer.statusCode < 300) {
          if (Value.Check(NetworkMediaUploadAnswer, json)) return { kind: 'uploaded', id: json.id, size };
          return { kind: 'unavailable', reason: 'bad_answer', detail: `HTTP ${answer.statusCode} without a media id` };
        }
        return readAnswer(answer.statusCode, answer.headers['retry-after'], text).result as UploadResult;
      } catch (error) {
        // The body's own errors reach us as they were thrown or as the cause of undici's.
        const stop = error instanceof StopUpload || error instanceof SourceFailed ? error : (error as { cause?: unknown })?.cause;
        if (stop instanceof StopUpload) return { kind: stop.reason };
        if (stop instanceof SourceFailed) throw stop.error;
        const code = errorCode(error);
        options.log?.warn({ code, path }, 'media upload to the messaging network failed');
        return { kind: 'unavailable', reason: TIMEOUTS.has(code) ? 'timeout' : 'unreachable', detail: code };
      }
    },

    close: (): Promise<void> => pool.close(),
  };
}
export type MediaUploader = ReturnType<typeof createMediaUploader>;
