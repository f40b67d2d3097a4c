// The network media client against a loopback "network" that misbehaves as the sandbox does not: a download longer
// than its lookup said (no Content-Length, so only counting the stream can stop it), and a URL on another host.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { createMediaClient, sha256Bytes } from '../src/messaging/media';
import { tempDir } from './helper';

async function network(t: Parameters<typeof tempDir>[0], body: Buffer, announced: Buffer) {
  const seen: { url: string; authorization?: string }[] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
    if (request.url === '/v1/42') {
      const { port } = server.address() as AddressInfo;
      // "Whatever host it names": localhost instead of 127.0.0.1.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ url: `http://localhost:${port}/file?sig=1`, mime_type: 'image/png', id: '42',
        sha256: createHash('sha256').update(announced).digest('hex'), file_size: announced.length }));
      return;
    }
    // Chunked: no Content-Length to refuse on.
    response.writeHead(200, { 'content-type': 'image/png' });
    for (let i = 0; i < body.length; i += 1000) response.write(body.subarray(i, i + 1000));
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const client = createMediaClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 5000, maxBytes: 5000 });
  t.teardown(() => client.close());
  return { client, seen };
}

t.test('a download streamed past MEDIA_MAX_BYTES is cut off and not kept', async (t) => {
  const bytes = Buffer.alloc(50_000, 7);
  const { client } = await network(t, bytes, Buffer.alloc(10, 7));
  const path = join(tempDir(t), '1.part');
  const outcome = await client.fetchTo({ mediaId: '42', token: 'tok', sha256: null, signal: new AbortController().signal }, path);
  t.match(outcome, { kind: 'final', error: 'too_large' });
  t.notOk(existsSync(path), 'the partial file is removed');
});

t.test('the digest is compared as bytes: base64 from the callback, hex from the lookup; the token goes to the URL host', async (t) => {
  const bytes = Buffer.from('a real file');
  const { client, seen } = await network(t, bytes, bytes);
  const path = join(tempDir(t), '2.part');
  const sha256 = createHash('sha256').update(bytes).digest('base64');
  const outcome = await client.fetchTo({ mediaId: '42', token: 'tok', sha256, signal: new AbortController().signal }, path);
  t.same(outcome, { kind: 'stored', size: bytes.length, mimeType: 'image/png' });
  t.same(readFileSync(path), bytes);
  t.same(seen.map((s) => [s.url, s.authorization]), [['/v1/42', 'Bearer tok'], ['/file?sig=1', 'Bearer tok']]);
  const wrong = await client.fetchTo({ mediaId: '42', token: 'tok', sha256: Buffer.alloc(32).toString('base64'), signal: new AbortController().signal }, join(tempDir(t), '3.part'));
  t.match(wrong, { kind: 'final', error: 'sha256_mismatch' }, 'the callback digest differs from the bytes');
  t.equal(sha256Bytes('not a digest'), null);
  t.same(sha256Bytes('00'.repeat(32)), Buffer.alloc(32));
});
