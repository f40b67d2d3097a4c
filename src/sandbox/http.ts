// Small HTTP helpers of the sandbox's node:http server.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The largest request body the sandbox reads (a 100 MiB document upload and its multipart framing). */
export const MAX_BODY_BYTES = 100 * 1024 * 1024 + 64 * 1024;

/** The whole body; null when it is larger than `limit` (the rest is drained, not kept). */
export function readBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** A JSON answer; nothing when the client has gone (e.g. it timed out while the sandbox delayed). */
export function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The Bearer token of a request, if any. */
export const bearer = (request: IncomingMessage): string | undefined => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
