// `npm run bench`: the gateway's hot paths against references measured in the same run, in interleaved
// rounds: bare Fastify for /healthz and callbacks, the sandbox network called directly for sends.
// Prints each ratio's median (min–max over rounds), listing latencies per round, and the gateway's peak RSS.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGING_PRODUCT } from '../schemas/network';
import { createHash } from 'node:crypto';
import { inboundPayload, inboundTextPayload, statusCallbackPayload } from '../src/sandbox/server';
import { median, run, sequential, spread, type Load, type Result, type Target } from './load';
import { BENCH_PASSWORD, bigUser, seed, smallUser } from './seed';
import { startServer, type Running } from './processes';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
/** Only the scenarios whose name matches (a regular expression), e.g. BENCH_ONLY=send. */
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '', 'i');
const APP_SECRET = 'bench-app-secret';

interface Pair { name: string; target: string; reference: Target; gateway: Target; load: Load }
interface Latency { name: string; target: string; gateway: Target; connections: number; check: (r: Result) => boolean }

/** Uploads a small image to the sandbox network, as a sender's phone would: the media every inbound-media callback names. */
async function uploadImage(sandboxUrl: string, phoneNumberId: string, token: string): Promise<{ id: string; sha256: string }> {
  const bytes = Buffer.alloc(64 * 1024, 7);
  const form = new FormData();
  form.set('messaging_product', MESSAGING_PRODUCT);
  form.set('file', new Blob([bytes], { type: 'image/jpeg' }), 'bench.jpg');
  const response = await fetch(`${sandboxUrl}/v23.0/${phoneNumberId}/media`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`upload: ${response.status} ${await response.text()}`);
  const { id } = await response.json() as { id: string };
  return { id, sha256: createHash('sha256').update(bytes).digest('base64') };
}

async function login(url: string, email: string): Promise<string> {
  const response = await fetch(url + '/api/login', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  });
  if (!response.ok) throw new Error(`login ${email}: ${response.status}`);
  return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** Peak resident set size of a child process, from the kernel's high-water mark (Linux). */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const servers: Running[] = [];
  try {
    const databasePath = join(dir, 'bench.db');
    process.stderr.write(`seeding ${MESSAGES} + 1000 messages…\n`);
    const [big, small] = await seed(databasePath, [bigUser(MESSAGES, 20_000), smallUser()]);
    const baseline = await startServer(join(__dirname, 'baseline-server.js'), {}, '/');
    const sandbox = await startServer(join(__dirname, 'sandbox-process.js'),
      { SANDBOX_PHONE_NUMBER_ID: big!.phoneNumberId, SANDBOX_TOKEN: big!.token }, '/_sandbox/requests');
    const gateway = await startServer(join(__dirname, '..', 'src', 'server.js'), {
      DATABASE_PATH: databasePath, LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: APP_SECRET, MESSAGING_VERIFY_TOKEN: 'bench',
      JWT_SECRET: 'bench-jwt-secret-bench-jwt-secret-0123', MESSAGING_API_URL: `${sandbox.url}/v23.0`,
      // As `npm start` and the systemd unit of the README run it.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    });
    servers.push(baseline, sandbox, gateway);
    const bigCookie = await login(gateway.url, 'big@bench.local');
    const smallCookie = await login(gateway.url, 'small@bench.local');

    let n = 0;
    const contact = () => String(15550000000 + (n % big!.contacts));
    const statusBody = () => {
      const i = n++;
      const status = (['sent', 'delivered', 'read'] as const)[Math.floor(i / big!.wamids.length) % 3]!;
      return JSON.stringify(statusCallbackPayload(big!.phoneNumberId,
        { wamid: big!.wamids[i % big!.wamids.length]!, status, recipient: contact(), timestamp: 1_700_000_000 + i }));
    };
    const inboundBody = () => {
      const i = n++;
      return JSON.stringify(inboundTextPayload(big!.phoneNumberId,
        { wamid: `wamid.benchin${process.pid}.${i}`, from: contact(), name: 'Bench', text: `inbound ${i}`, timestamp: Math.floor(Date.now() / 1000) }));
    };
    const image = await uploadImage(sandbox.url, big!.phoneNumberId, big!.token);
    // Each one queues a 64 KB download that the gateway's worker fetches from the sandbox while later scenarios run.
    const inboundMediaBody = () => {
      const i = n++;
      return JSON.stringify(inboundPayload(big!.phoneNumberId, {
        wamid: `wamid.benchmedia${process.pid}.${i}`, from: contact(), name: 'Bench', timestamp: Math.floor(Date.now() / 1000),
        media: { type: 'image', id: image.id, mime_type: 'image/jpeg', sha256: image.sha256, caption: `photo ${i}` },
      }));
    };
    const sendBody = () => JSON.stringify({ to: contact(), type: 'text', text: { body: `bench ${n++}` } });
    const wireBody = () => JSON.stringify({ messaging_product: MESSAGING_PRODUCT, recipient_type: 'individual', to: contact(), type: 'text', text: { body: `bench ${n++}` } });

    const webhook = '/api/messaging/webhook';
    const pairs: Pair[] = [
      { name: 'GET /healthz', target: '≈ 1', reference: { url: baseline.url, path: '/healthz' }, gateway: { url: gateway.url, path: '/healthz' },
        load: { method: 'GET', connections: 50, seconds: SECONDS } },
      { name: 'POST /api/message/send vs the sandbox called directly', target: '≥ 0.18',
        reference: { url: sandbox.url, path: `/v23.0/${big!.phoneNumberId}/messages`, headers: { authorization: `Bearer ${big!.token}` } },
        gateway: { url: gateway.url, path: '/api/message/send', headers: { cookie: bigCookie } },
        load: { method: 'POST', connections: 50, seconds: SECONDS, body: sendBody } },
      { name: 'signed status callbacks', target: '≥ 0.35', reference: { url: baseline.url, path: webhook }, gateway: { url: gateway.url, path: webhook },
        load: { method: 'POST', connections: 50, seconds: SECONDS, body: statusBody, signWith: APP_SECRET } },
      { name: 'signed inbound-message callbacks', target: '≥ 0.25', reference: { url: baseline.url, path: webhook }, gateway: { url: gateway.url, path: webhook },
        load: { method: 'POST', connections: 50, seconds: SECONDS, body: inboundBody, signWith: APP_SECRET } },
      { name: 'signed inbound media callbacks (each queues a download)', target: '≥ 0.25', reference: { url: baseline.url, path: webhook },
        gateway: { url: gateway.url, path: webhook },
        load: { method: 'POST', connections: 50, seconds: SECONDS, body: inboundMediaBody, signWith: APP_SECRET } },
    ];
    // The send reference gets the wire body, the gateway its own API body.
    const referenceLoad = (pair: Pair): Load => (pair.reference.url === sandbox.url ? { ...pair.load, body: wireBody } : pair.load);
    const conversations = (id: number, query: string) => `/api/user/${id}/conversations${query}`;
    const latencies: Latency[] = [
      { name: 'conversations, 1,000 messages, ?filter=all (1 client)', target: 'p50 < 2 ms',
        gateway: { url: gateway.url, path: conversations(small!.id, '?filter=all'), headers: { cookie: smallCookie } }, connections: 1,
        check: (r) => r.p50 < 2 },
      { name: `conversations, ${MESSAGES} messages, ?filter=all&limit=50 (1 client)`, target: 'p50 < 15 ms, p99 < 5 × p50',
        gateway: { url: gateway.url, path: conversations(big!.id, '?filter=all&limit=50'), headers: { cookie: bigCookie } }, connections: 1,
        check: (r) => r.p50 < 15 && r.p99 < 5 * r.p50 },
      { name: `conversations, ${MESSAGES} messages, limit=50 (50 clients at once)`, target: 'p99 < 5 × p50',
        gateway: { url: gateway.url, path: conversations(big!.id, '?filter=all&limit=50'), headers: { cookie: bigCookie } }, connections: 50,
        check: (r) => r.p99 < 5 * r.p50 },
    ];

    const ratios = new Map<string, number[]>();
    const gatewayRuns = new Map<string, Result[]>();
    const latencyRuns = new Map<string, Result[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const pair of pairs.filter((p) => ONLY.test(p.name))) {
        process.stderr.write(`round ${round}: ${pair.name}…\n`);
        // Alternate who goes first, so warm-up and database growth do not favour one side.
        const reference = async () => run(pair.reference, referenceLoad(pair));
        const ours = async () => run(pair.gateway, pair.load);
        const [ref, gw] = round % 2 === 1 ? [await reference(), await ours()] : await (async () => { const g = await ours(); return [await reference(), g]; })();
        ratios.set(pair.name, [...(ratios.get(pair.name) ?? []), gw.rps / ref.rps]);
        gatewayRuns.set(pair.name, [...(gatewayRuns.get(pair.name) ?? []), gw]);
      }
      for (const latency of latencies.filter((l) => ONLY.test(l.name))) {
        process.stderr.write(`round ${round}: ${latency.name}…\n`);
        const result = latency.connections === 1 ? await sequential(latency.gateway, SECONDS)
          : await run(latency.gateway, { method: 'GET', connections: latency.connections, seconds: SECONDS });
        latencyRuns.set(latency.name, [...(latencyRuns.get(latency.name) ?? []), result]);
      }
    }

    const rows = ['| scenario | target | ratio, median (min–max) | gateway req/s | gateway p50 / p99 ms | non-2xx | met |', '|---|---|---|---|---|---|---|'];
    for (const pair of pairs.filter((p) => ratios.has(p.name))) {
      const values = ratios.get(pair.name)!;
      const runs = gatewayRuns.get(pair.name)!;
      const minimum = Number(/[0-9.]+/.exec(pair.target)?.[0] ?? 0);
      const met = pair.target.startsWith('≥') ? (median(values) >= minimum ? 'yes' : 'NO') : '';
      rows.push(`| ${pair.name} | ${pair.target} | ${spread(values, 3)} | ${median(runs.map((r) => r.rps)).toFixed(0)} | `
        + `${median(runs.map((r) => r.p50))} / ${median(runs.map((r) => r.p99))} | ${runs.reduce((a, r) => a + r.errors, 0)} | ${met} |`);
    }
    const latencyRows = ['| listing | target | p50 ms per round | p99 ms per round | met in every round |', '|---|---|---|---|---|'];
    for (const latency of latencies.filter((l) => latencyRuns.has(l.name))) {
      const runs = latencyRuns.get(latency.name)!;
      latencyRows.push(`| ${latency.name} | ${latency.target} | ${runs.map((r) => r.p50.toFixed(1)).join(', ')} | `
        + `${runs.map((r) => r.p99.toFixed(1)).join(', ')} | ${runs.every(latency.check) ? 'yes' : 'NO'} |`);
    }
    console.log(`\n${MESSAGES} + 1000 messages seeded, ${ROUNDS} interleaved rounds of ${SECONDS} s per run, node ${process.version}\n`);
    console.log(rows.join('\n'));
    console.log('');
    console.log(latencyRows.join('\n'));
    const rss = peakRssMb(gateway.pid);
    console.log(`\ngateway peak RSS: ${rss.toFixed(0)} MB (target < 300 MB: ${rss < 300 ? 'yes' : 'NO'})`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
void main();
