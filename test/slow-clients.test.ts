// Slow and bulky clients over real loopback sockets: a request not fully arrived by REQUEST_TIMEOUT_MS gets 408 in our
// shape and is closed; others keep being served; the webhook's 3 MB limit and the body budget hold.
import { connect } from 'node:net';
import Fastify from 'fastify';
import t from 'tap';
import errorHandler from '../src/plugins/error-handler';
import slowClients from '../src/plugins/slow-clients';
import { buildTestApp } from './helper';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WEBHOOK = '/api/messaging/webhook';

interface Ended { answer: string; error?: string }

/** A raw socket that writes `head`, then one byte every 200 ms (when `trickle`), until the server closes it. */
function slowSocket(port: number, head: string, trickle: boolean): Promise<Ended> {
  return new Promise((resolve) => {
    let answer = '';
    let error: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      if (head) socket.write(head);
      if (trickle) timer = setInterval(() => socket.writable && socket.write('x'), 200);
    });
    socket.on('data', (chunk) => { answer += chunk.toString(); });
    // A reset after the answer (the client was still sending) still means closed.
    socket.on('error', (e: NodeJS.ErrnoException) => { error = e.code; });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, error });
    });
  });
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const headers = Object.fromEntries(lines.slice(1).map((line) => {
    const at = line.indexOf(':');
    return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
  }));
  return { status: lines[0], headers, body: body ? JSON.parse(body) as unknown : undefined };
}

const TIMEOUT_BODY = { statusCode: 408, code: 'REQUEST_TIMEOUT', error: 'Request Timeout', message: 'The request did not arrive in time' };

t.test('a slow body, slow headers and a silent connection get 408 in our shape and are closed; others are served meanwhile',
  { timeout: 15_000 }, async (t) => {
    const { app, logs } = await buildTestApp(t, { requestTimeoutMs: 1000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };

    const slowBody = slowSocket(port, `POST ${WEBHOOK} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`
      + `Content-Length: ${1024 * 1024}\r\n\r\n{"entry":`, true);
    const slowHeaders = slowSocket(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', true);
    const silent = slowSocket(port, '', false);

    // Meanwhile, normal requests on other connections: answered as usual.
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      t.equal(res.status, 200);
      t.same(await res.json(), { status: 'ok' });
      await new Promise((r) => setTimeout(r, 300));
    }

    for (const [name, ended] of [['slow body', await slowBody], ['slow headers', await slowHeaders], ['silent', await silent]] as const) {
      const answer = parse(ended.answer);
      t.equal(answer.status, 'HTTP/1.1 408 Request Timeout', name);
      t.same(answer.body, TIMEOUT_BODY, name);
      t.match(answer.headers['x-request-id'], UUID, name);
      t.equal(answer.headers.connection, 'close', name);
      t.equal(answer.headers['x-frame-options'], 'DENY', name);
      t.match(answer.headers['content-security-policy'], /frame-ancestors 'none'/, name);
    }
    t.match(logs(), /"code":"ERR_HTTP_REQUEST_TIMEOUT","remoteAddress":"127\.0\.0\.1","msg":"client error answered 408"/);
    t.notMatch(logs(), /"level":50/, 'nothing logged as an error');
  });

t.test('a keep-alive client that sends whole requests keeps its connection past the deadline', { timeout: 15_000 }, async (t) => {
  const { app } = await buildTestApp(t, { requestTimeoutMs: 1000 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const answers: string[] = [];
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.on('data', (chunk) => answers.push(chunk.toString()));
  let closed = false;
  socket.on('close', () => { closed = true; });
  for (let i = 0; i < 4; i++) {
    const before = answers.length;
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    while (answers.length === before) await new Promise((r) => setTimeout(r, 20));
    t.match(answers.at(-1), /^HTTP\/1\.1 200 OK/, `request ${i + 1}`);
    await new Promise((r) => setTimeout(r, 800)); // idle between requests: 3.2 s in all, past the 1 s deadline
  }
  t.notOk(closed, 'the idle keep-alive connection was not cut by the request deadline');
});

t.test('the webhook refuses a body of 3 MB + 1 byte with 413, on a real socket too', async (t) => {
  const { app } = await buildTestApp(t, { messagingAppSecret: 'secret' });
  const limit = 3 * 1024 * 1024;
  const over = `{"pad":"${'x'.repeat(limit + 1 - 10)}"}`;
  t.equal(Buffer.byteLength(over), limit + 1);
  const res = await app.inject({ method: 'POST', url: WEBHOOK, headers: { 'content-type': 'application/json' }, payload: over });
  t.equal(res.statusCode, 413);
  t.same(res.json(), { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', error: 'Payload Too Large', message: 'Request body is too large' });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  // Declared too large: refused from the headers alone, before any byte of the body.
  const ended = await slowSocket(port, `POST ${WEBHOOK} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${limit + 1}\r\n\r\n`, false);
  const answer = parse(ended.answer);
  t.equal(answer.status, 'HTTP/1.1 413 Payload Too Large');
  t.match(answer.body, { code: 'PAYLOAD_TOO_LARGE' });
  // Exactly at the limit is not refused for its size (it is then checked as a callback: a bad signature here).
  const at = `{"pad":"${'x'.repeat(limit - 10)}"}`;
  const ok = await app.inject({ method: 'POST', url: WEBHOOK, headers: { 'content-type': 'application/json' }, payload: at });
  t.equal(ok.json().code, 'INVALID_SIGNATURE');
});

t.test('bodies beyond the budget of bytes held at once get 503 BUSY; the budget is returned after each answer', async (t) => {
  const app = Fastify({ bodyLimit: 1024 * 1024 });
  t.teardown(() => app.close());
  await app.register(errorHandler);
  await app.register(slowClients, { budgetBytes: 100_000 });
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  // The first request holds its 60 KB body until the gate opens, as a handler still at work would.
  app.post('/hold', async (request) => { await gate; return { size: JSON.stringify(request.body).length }; });
  app.post('/echo', async (request) => ({ size: JSON.stringify(request.body).length }));
  const body = (n: number) => JSON.stringify({ pad: 'x'.repeat(n) });

  const held = app.inject({ method: 'POST', url: '/hold', headers: { 'content-type': 'application/json' }, payload: body(60_000) });
  await new Promise((r) => setTimeout(r, 50));
  const refused = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(50_000) });
  t.equal(refused.statusCode, 503);
  t.same(refused.json(), { statusCode: 503, code: 'BUSY', error: 'Service Unavailable',
    message: 'Too many large requests are being received at once; retry shortly' });
  t.equal(refused.headers['retry-after'], '5');
  const small = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(10_000) });
  t.equal(small.statusCode, 200, 'a body that fits the rest of the budget passes');

  release();
  t.equal((await held).statusCode, 200);
  const again = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(90_000) });
  t.equal(again.statusCode, 200, 'the held bytes were returned');
  t.same(again.json(), { size: 90_010 });
});

t.test('small bodies count against the budget from their headers: their declared length is held until the answer', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  await app.register(errorHandler);
  await app.register(slowClients, { budgetBytes: 20_000 });
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  app.post('/hold', async (request) => { await gate; return { size: JSON.stringify(request.body).length }; });
  app.post('/echo', async (request) => ({ size: JSON.stringify(request.body).length }));
  const body = (n: number) => JSON.stringify({ pad: 'x'.repeat(n) });

  // Two 8 KB bodies held at once fill 16,010 + 20 bytes of the 20,000; a third small body does not fit beside them.
  const held = [app.inject({ method: 'POST', url: '/hold', headers: { 'content-type': 'application/json' }, payload: body(8_000) }),
    app.inject({ method: 'POST', url: '/hold', headers: { 'content-type': 'application/json' }, payload: body(8_000) })];
  await new Promise((r) => setTimeout(r, 50));
  const refused = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(4_000) });
  t.equal(refused.statusCode, 503);
  t.equal(refused.json().code, 'BUSY');
  const fits = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(3_000) });
  t.equal(fits.statusCode, 200, 'a body that fits the rest of the budget passes');

  release();
  for (const answer of await Promise.all(held)) t.equal(answer.statusCode, 200);
  const again = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body(15_000) });
  t.equal(again.statusCode, 200, 'the declared lengths were returned');
  t.same(again.json(), { size: 15_010 });
});
