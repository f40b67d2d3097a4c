// `npm run bench`: the gateway's hot paths against a bare Fastify baseline, in the same run,
// on a seeded database. Prints requests/s, latency and the ratio to the baseline.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { statusCallbackPayload } from '../src/messaging/sandbox';
import { signBody } from '../src/webhooks/signature';
import { BENCH_PASSWORD, seed } from './seed';
import { startServer, type Running } from './processes';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const APP_SECRET = 'bench-app-secret';

interface Scenario { name: string; method: 'GET' | 'POST'; path: string; connections: number; bodies?: string[]; headers?: Record<string, string> }
interface Result { rps: number; p50: number; p99: number; errors: number }

async function load(base: string, s: Scenario, sign: boolean): Promise<Result> {
  let next = 0;
  const bodies = s.bodies ?? [];
  const result = await autocannon({
    url: base + s.path, method: s.method, connections: s.connections, duration: SECONDS,
    headers: { 'content-type': 'application/json', ...s.headers },
    requests: [{
      setupRequest: (request) => {
        if (bodies.length === 0) return request;
        const body = bodies[next++ % bodies.length]!;
        const headers = { ...request.headers };
        if (sign) headers['x-hub-signature-256'] = signBody(body, APP_SECRET);
        return { ...request, body, headers };
      },
    }],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const servers: Running[] = [];
  try {
    const databasePath = join(dir, 'bench.db');
    process.stderr.write(`seeding ${MESSAGES} messages…\n`);
    const seeded = await seed(databasePath, MESSAGES, 500, 20_000);
    const baseline = await startServer(join(__dirname, 'baseline-server.js'), {}, '/');
    servers.push(baseline);
    const gateway = await startServer(join(__dirname, '..', 'src', 'server.js'), {
      DATABASE_PATH: databasePath, LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: APP_SECRET, MESSAGING_VERIFY_TOKEN: 'bench',
      JWT_SECRET: 'bench-jwt-secret-bench-jwt-secret-0123',
    });
    servers.push(gateway);
    const login = await fetch(gateway.url + '/api/login', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'client@bench.local', password: BENCH_PASSWORD }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const callbacks = seeded.wamids.flatMap((wamid, i) => (['sent', 'delivered', 'read'] as const).map((status) =>
      JSON.stringify(statusCallbackPayload(seeded.phoneNumberId, { wamid, status, recipient: '15550000000', timestamp: 1_700_000_000 + i }))));
    const conversations = `/api/user/${seeded.clientId}/conversations`;
    const scenarios: Scenario[] = [
      { name: 'GET /healthz', method: 'GET', path: '/healthz', connections: 50 },
      { name: 'POST webhook (signed status callbacks)', method: 'POST', path: '/api/messaging/webhook', connections: 50, bodies: callbacks },
      { name: 'GET conversations (limit 50)', method: 'GET', path: conversations, connections: 10, headers: { cookie } },
      { name: 'GET conversations (limit 10)', method: 'GET', path: conversations + '?limit=10', connections: 10, headers: { cookie } },
      { name: 'GET conversations (text, last 7 days)', method: 'GET', path: conversations + '?type=text&filter=last_7_days', connections: 10, headers: { cookie } },
    ];
    const rows: string[] = ['| scenario | gateway req/s | baseline req/s | ratio | gateway p50 / p99 ms | non-2xx |', '|---|---|---|---|---|---|'];
    for (const s of scenarios) {
      process.stderr.write(`${s.name}…\n`);
      const base = await load(baseline.url, s, false);
      const ours = await load(gateway.url, s, true);
      rows.push(`| ${s.name} | ${ours.rps.toFixed(0)} | ${base.rps.toFixed(0)} | ${(ours.rps / base.rps).toFixed(3)} | ${ours.p50} / ${ours.p99} | ${ours.errors} |`);
    }
    console.log(`\n${MESSAGES} messages in the database, ${SECONDS}s per run, node ${process.version}\n`);
    console.log(rows.join('\n'));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
void main();
