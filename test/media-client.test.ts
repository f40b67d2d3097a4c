// The network media client against a loopback "network" that misbehaves as the sandbox does not: a download longer
// than its lookup said (no Content-Length, so only counting the stream can stop it), a lookup answer that never ends,
// and a URL on a loopback host other than the API's (which must never get the token).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { createMediaClient, sha256Bytes } from '../src/messaging/media';
import { guardedLookup, isInternalAddress, refusedMediaUrl } from '../src/messaging/media-url-policy';
import { tempDir } from './helper';

async function network(t: Parameters<typeof tempDir>[0], body: Buffer, announced: Buffer) {
  const seen: { url: string; authorization?: string }[] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
    if (request.url === '/v1/42') {
      const { port } = server.address() as AddressInfo;
      // Another path on the API's own host (a loopback address is allowed only when it is the API's).
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ url: `http://127.0.0.1:${port}/file?sig=1`, mime_type: 'image/png', id: '42',
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

/** A loopback server answering every request with `handle`; records what it saw and every connection. */
async function loopback(t: Parameters<typeof tempDir>[0], host: string, handle: (request: IncomingMessage, response: ServerResponse) => void) {
  const seen: { url: string; authorization?: string }[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
    handle(request, response);
  });
  server.on('connection', () => void (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, seen, connections: () => connections };
}

t.test('a lookup answer over 64 KB is cut off and refused, never read whole (here it never ends)', async (t) => {
  let sent = 0;
  const api = await loopback(t, '127.0.0.1', (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    // 1 MB of a JSON string, then the answer stays open: only a reader that stops at 64 KB gets an outcome.
    response.write('{"url":"');
    for (let i = 0; i < 16; i++) { response.write('x'.repeat(65_536)); sent += 65_536; }
  });
  const client = createMediaClient({ baseUrl: `${api.url}/v1`, timeoutMs: 60_000, maxBytes: 5000 });
  t.teardown(() => client.close());
  const path = join(tempDir(t), '1.part');
  const outcome = await client.fetchTo({ mediaId: '42', token: 'tok', sha256: null, signal: new AbortController().signal }, path);
  t.same(outcome, { kind: 'retry', detail: 'lookup: answer over 65536 bytes' }, 'refused as a failure, tried again later');
  t.equal(sent, 1_048_576, 'the network offered a whole megabyte');
  t.notOk(existsSync(path));
});

t.test('a media URL on another loopback address (127.0.0.2, the API being on 127.0.0.1) gets no token: url_refused, no connection', async (t) => {
  const elsewhere = await loopback(t, '127.0.0.2', (request, response) => response.end('stolen'));
  const api = await loopback(t, '127.0.0.1', (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ url: `${elsewhere.url}/file`, mime_type: 'image/png', id: '42', sha256: '00'.repeat(32), file_size: 6 }));
  });
  const client = createMediaClient({ baseUrl: `${api.url}/v1`, timeoutMs: 5000, maxBytes: 5000 });
  t.teardown(() => client.close());
  const outcome = await client.fetchTo({ mediaId: '42', token: 'tok', sha256: null, signal: new AbortController().signal }, join(tempDir(t), '1.part'));
  t.match(outcome, { kind: 'final', error: 'url_refused', detail: /127\.0\.0\.2/ });
  t.same(api.seen, [{ url: '/v1/42', authorization: 'Bearer tok' }], 'the token went to the API only');
  t.same(elsewhere.seen, [], 'no request at the other address');
  t.equal(elsewhere.connections(), 0, 'not even a connection');
});

t.test('the URL policy: https only (http while the API is http), no internal address but the API host', async (t) => {
  const real = 'https://graph.facebook.com/v25.0';
  t.match(await refusedMediaUrl('http://93.184.216.34/f', real), /^http URL while the API is reached over https/);
  t.equal(await refusedMediaUrl('https://93.184.216.34/f', real), null, 'a public address over https');
  for (const url of ['https://127.0.0.1/f', 'https://10.1.2.3/f', 'https://172.20.0.1/f', 'https://192.168.1.1/f', 'https://169.254.169.254/latest',
    'https://[::1]/f', 'https://[fe80::1]/f', 'https://[fd00::1]/f', 'https://[::ffff:127.0.0.1]/f', 'https://0.0.0.0/f']) {
    t.match(await refusedMediaUrl(url, real), /loopback, private or link-local/, url);
  }
  t.equal(await refusedMediaUrl('http://127.0.0.1:9/f', 'http://127.0.0.1:8/v1'), null, "the API's own loopback host, http like the API");
  t.match(await refusedMediaUrl('ftp://127.0.0.1/f', 'http://127.0.0.1:8/v1'), /^ftp URL/);
  t.match(await refusedMediaUrl('http://u:p@127.0.0.1/f', 'http://127.0.0.1:8/v1'), /credentials/);
  t.ok(isInternalAddress('100.64.0.1'));
  t.notOk(isInternalAddress('8.8.8.8'));
  t.notOk(isInternalAddress('2001:4860::8888'));
});

t.test('at connect time too: a host name resolving to an internal address is refused unless it is the API host', async (t) => {
  const resolve = (apiUrl: string, host: string) => new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((done) =>
    guardedLookup(apiUrl)(host, { all: true }, (error, address) => done({ error, address })));
  const refused = await resolve('http://127.0.0.1:8/v1', 'localhost');
  t.equal(refused.error?.code, 'EADDRNOTALLOWED', 'localhost is not the API host 127.0.0.1');
  const own = await resolve('http://localhost:8/v1', 'localhost');
  t.equal(own.error, null, "the API's own host name");
  t.ok(Array.isArray(own.address) && own.address.length > 0);
});
