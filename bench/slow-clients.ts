// Slow clients against the gateway on loopback: many sockets each send most of a large webhook body,
// then trickle the rest. Prints the server's RSS before, at peak and after, and how the sockets ended.
// Run: npx tsc -p tsconfig.bench.json && node dist/bench/slow-clients.js   (BENCH_SOCKETS, BENCH_TIMEOUT_MS)
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayNodeFlags, startServer } from './processes';

const SOCKETS = Math.min(Number(process.env.BENCH_SOCKETS ?? 200), 1000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 10_000);
const BODY_BYTES = 3 * 1024 * 1024 - 16; // just under the webhook's limit
const SENT_AT_ONCE = BODY_BYTES - 1024; // the rest trickles, one byte every 500 ms

function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(line?.[1] ?? 0) / 1024);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome { status: string; closedAfterMs: number }

function slowClient(port: number, chunk: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    let trickle: NodeJS.Timeout | undefined;
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write('POST /api/messaging/webhook HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n'
        + `Content-Length: ${BODY_BYTES}\r\n\r\n`);
      socket.write(chunk, () => {
        trickle = setInterval(() => socket.writable && socket.write('x'), 500);
      });
    });
    socket.on('data', (data) => { answer += data.toString('latin1'); });
    let failure = '';
    socket.on('error', (error: NodeJS.ErrnoException) => { failure = error.code ?? error.message; });
    socket.on('close', () => {
      clearInterval(trickle);
      resolve({ status: answer.split('\r\n', 1)[0] || `(nothing: ${failure || 'closed'})`, closedAfterMs: Date.now() - started });
    });
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-slow-'));
  const script = join(__dirname, '..', 'src', 'server.js');
  const server = await startServer(script, {
    DATABASE_PATH: join(dir, 'bench.db'), LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: 'bench-app-secret',
    JWT_SECRET: 'bench-jwt-secret-bench-jwt-secret-0123', REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
  }, '/healthz', gatewayNodeFlags(script));
  try {
    const port = Number(new URL(server.url).port);
    await sleep(1000);
    const before = rssMb(server.pid);
    const chunk = Buffer.alloc(SENT_AT_ONCE, '{"pad":"' + 'x'.repeat(1000));
    let peak = before;
    let healthFailures = 0;
    let healthChecks = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(server.pid));
      healthChecks++;
      fetch(server.url + '/healthz', { signal: AbortSignal.timeout(2000) })
        .then((res) => { if (!res.ok) healthFailures++; }, () => { healthFailures++; });
    }, 500);
    const started = Date.now();
    const outcomes = await Promise.race([
      Promise.all(Array.from({ length: SOCKETS }, () => slowClient(port, chunk))),
      sleep(TIMEOUT_MS + 60_000).then(() => null),
    ]);
    const allClosedMs = Date.now() - started;
    await sleep(2000);
    clearInterval(sampler);
    const after = rssMb(server.pid);

    const statuses = new Map<string, number>();
    for (const o of outcomes ?? []) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    console.log(`sockets: ${SOCKETS}, body ${BODY_BYTES} bytes (${SENT_AT_ONCE} at once, then 2 bytes/s), REQUEST_TIMEOUT_MS=${TIMEOUT_MS}`);
    console.log(`server RSS: before ${before} MB, peak ${peak} MB, 2 s after the last socket closed ${after} MB`);
    console.log(outcomes ? `all sockets closed after ${allClosedMs} ms; answers: ${JSON.stringify(Object.fromEntries(statuses))}`
      : `sockets still open after ${TIMEOUT_MS + 60_000} ms`);
    console.log(`GET /healthz during the run: ${healthChecks - healthFailures}/${healthChecks} answered 200`);
    if (!outcomes) process.exitCode = 1;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit();
}
void main();
