// `npm run bench [-- --against <git ref>]`: the gateway's hot paths against references measured in the same rounds.
// Every server is a process of its own (bare Fastify, the sandbox network, the gateway, and the ref's gateway with
// --against) and so is the load generator (loadgen.ts, raw sockets). Rounds interleave the sides of each scenario;
// per scenario it prints req/s, the ratio to the reference within each round and the server's CPU µs per request
// (from /proc/<pid>/stat), as medians with min–max over the rounds; listing latencies, the 3 MB flood and peak RSS.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGING_PRODUCT } from '../schemas/network';
import { buildRef, currentLabel, type RefBuild } from './against';
import type { BodyKind } from './bodies';
import type { Answer, Job, Side, Summary } from './loadgen';
import { startLoadGenerator, type LoadGenerator } from './loadgen-client';
import { gatewayNodeFlags, loopCpuSeconds, peakRssMb, settledCpuSeconds, startServer, type Running } from './processes';
import { runScale } from './scale';
import { bigUser, callbacksUser, login, seed, senders, smallUser, unpaced } from './seed';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 2);
/** Users the send scenario spreads over, each its own phone number paced at the network's highest rate (1,000/s). */
const SENDERS = Number(process.env.BENCH_SENDERS ?? 4);
/** Seconds each side of a scenario runs before its first round: a fresh process needs a few seconds of JIT. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** Only the scenarios whose name matches (a regular expression), e.g. BENCH_ONLY=send. */
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '', 'i');
const APP_SECRET = 'bench-app-secret';
const WEBHOOK = '/api/messaging/webhook';
const ROOT = join(__dirname, '..', '..');

const args = process.argv.slice(2);
const againstAt = args.indexOf('--against');
const AGAINST = againstAt === -1 ? undefined : args[againstAt + 1];
if (againstAt !== -1 && !AGAINST) throw new Error('--against needs a git ref, e.g. --against b15a796');

interface Build { label: string; gateway: Running; bigCookie: string; smallCookie: string; senderCookies: string[] }
/** One side of a throughput scenario: where the requests go, which body, and whose CPU is read. */
interface Sided { label: string; pid: number; side: Side; body?: BodyKind; signWith?: string }
interface Throughput {
  name: string; target: string; minimum: number; maxP99?: number; optional?: boolean;
  reference: (b: Build) => Sided; gateway: (b: Build) => Sided; connections?: number; pipelining?: number;
}
interface Listing { name: string; target: string; check: (p50: number, p99: number) => boolean; path: (b: Build) => Side; connections: number }
interface Run { rps: number; cpuUs: number; loopUs: number; p50: number; p99: number; errors: number; count: number; statuses: Record<string, number> }

let loadgen: LoadGenerator;
const ask = (job: Job): Promise<Answer> => loadgen.ask(job);

/** Runs `job` once the server `pid` is idle, and its CPU µs per request until it is idle again. */
async function measured(pid: number, job: Job): Promise<{ answer: Answer; run: Run }> {
  const before = await settledCpuSeconds(pid);
  const loopBefore = loopCpuSeconds(pid);
  const answer = await ask(job);
  const cpu = (await settledCpuSeconds(pid)) - before;
  const loop = loopCpuSeconds(pid) - loopBefore;
  const r = answer.result!;
  const perRequest = (seconds: number) => (seconds / Math.max(r.count, 1)) * 1e6;
  return { answer, run: { rps: r.rps, cpuUs: perRequest(cpu), loopUs: perRequest(loop), p50: r.p50, p99: r.p99, errors: r.errors, count: r.count, statuses: r.statuses } };
}

/** The gateway's METRICS_TOKEN in the bench: each run reads the syncs of its write-ahead log around it. */
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
interface SyncCounters { all: number; inPlace: number; slow: number; seconds: number }

/** The gateway's sync counters from /metrics; undefined for a build without them (an older ref). */
async function syncCounters(port: number): Promise<SyncCounters | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (!res.ok) return undefined;
    const lines = (await res.text()).split('\n');
    const value = (series: string) => Number(lines.find((line) => line.startsWith(`${series} `))?.slice(series.length + 1) ?? NaN);
    const counters = { all: value('gateway_database_syncs{kind="all"}'), inPlace: value('gateway_database_syncs{kind="in_place"}'),
      slow: value('gateway_database_syncs{kind="slow"}'), seconds: value('gateway_database_sync_seconds') };
    return Object.values(counters).every(Number.isFinite) ? counters : undefined;
  } catch {
    return undefined;
  }
}

/** `; N syncs of the WAL (in place, slow), average X ms` of one run, or nothing when the build does not count them. */
function syncsOfRun(before: SyncCounters | undefined, after: SyncCounters | undefined): string {
  if (!before || !after) return '';
  const all = after.all - before.all;
  return `; ${fixed(all, 0)} syncs of the WAL (${fixed(after.inPlace - before.inPlace, 0)} in place, ${fixed(after.slow - before.slow, 0)} of 10 ms or more), `
    + `average ${fixed(all > 0 ? ((after.seconds - before.seconds) * 1000) / all : 0, 2)} ms`;
}

// ---- statistics and tables -------------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
const fixed = (n: number, digits: number) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** `median (min–max)` with `digits` decimals. */
function spread(values: number[], digits: number): string {
  if (values.length === 0) return '–';
  return values.length === 1 ? fixed(values[0]!, digits) : `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})`;
}
/** Errors over all runs, with the statuses other than 2xx (a status of 0 is a connection the server closed). */
function errorsOf(list: Run[]): string {
  const errors = list.reduce((a, r) => a + r.errors, 0);
  const other: Record<string, number> = {};
  for (const r of list) for (const [status, count] of Object.entries(r.statuses)) if (!status.startsWith('2')) other[status] = (other[status] ?? 0) + count;
  const detail = Object.entries(other).map(([status, count]) => `${count} × ${status}`).join(', ');
  return detail ? `${errors} (${detail})` : String(errors);
}
const push = <T>(map: Map<string, T[]>, key: string, value: T) => map.set(key, [...(map.get(key) ?? []), value]);

// ---- setup -------------------------------------------------------------------------------------------------------

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

const portOf = (running: Running) => Number(new URL(running.url).port);


async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(line);
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const servers: Running[] = [];
  let ref: RefBuild | undefined;
  loadgen = startLoadGenerator();
  try {
    if (AGAINST) ref = buildRef(ROOT, AGAINST, log);
    log(`seeding 2 × ${MESSAGES} + 1000 messages…\n`);
    const [big, small, callbacks, ...sending] = await seed(join(dir, 'seed', 'bench.db'),
      [bigUser(MESSAGES, MESSAGES / 2), smallUser(), callbacksUser(MESSAGES), ...senders(SENDERS)], ref?.migrations);
    const baseline = await startServer(join(__dirname, 'baseline-server.js'), {}, '/');
    servers.push(baseline);
    const sandbox = await startServer(join(__dirname, 'sandbox-process.js'),
      { SANDBOX_PHONE_NUMBER_ID: callbacks!.phoneNumberId, SANDBOX_TOKEN: callbacks!.token, SANDBOX_ACCOUNTS: [big!, ...sending].map((u) => `${u.phoneNumberId}:${u.token}`).join(',') },
      '/_sandbox/requests');
    servers.push(sandbox);

    const gatewayEnv = (sandboxUrl: string, databasePath: string): Record<string, string> => ({
      DATABASE_PATH: databasePath, LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: APP_SECRET, MESSAGING_VERIFY_TOKEN: 'bench',
      JWT_SECRET: 'bench-jwt-secret-bench-jwt-secret-0123', MESSAGING_API_URL: `${sandboxUrl}/v23.0`,
      // As `npm start` and the systemd unit of the README run it.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      METRICS_TOKEN,
    });
    // Each build gets its own copy of the seeded database (and the token key file beside it).
    const startGateway = async (label: string, script: string, name: string): Promise<Build> => {
      cpSync(join(dir, 'seed'), join(dir, name), { recursive: true });
      const gateway = await startServer(script, gatewayEnv(sandbox.url, join(dir, name, 'bench.db')), '/healthz', gatewayNodeFlags(script));
      servers.push(gateway);
      for (const user of [big!, ...sending]) await unpaced(gateway.url, user.id);
      return { label, gateway, bigCookie: await login(gateway.url, 'big@bench.local'), smallCookie: await login(gateway.url, 'small@bench.local'),
        senderCookies: await Promise.all(sending.map((_, i) => login(gateway.url, `sender${i + 1}@bench.local`))) };
    };
    const builds: Build[] = [];
    if (ref) builds.push(await startGateway(ref.label, ref.server, 'ref'));
    builds.push(await startGateway(`${currentLabel(ROOT)} (this tree)`, join(__dirname, '..', 'src', 'server.js'), 'current'));

    const image = await uploadImage(sandbox.url, callbacks!.phoneNumberId, callbacks!.token);
    await ask({ kind: 'setup', data: { phoneNumberId: callbacks!.phoneNumberId, wamids: callbacks!.wamids, contacts: callbacks!.contacts, image } });

    const bare = (path: string, method: 'GET' | 'POST', body?: BodyKind): Sided =>
      ({ label: 'bare Fastify (reference)', pid: baseline.pid, side: { port: portOf(baseline), path, method }, body });
    const ours = (b: Build, path: string, method: 'GET' | 'POST', body?: BodyKind, headers?: Record<string, string>): Sided =>
      ({ label: b.label, pid: b.gateway.pid, side: { port: portOf(b.gateway), path, method, headers }, body, signWith: body ? APP_SECRET : undefined });
    const throughputs: Throughput[] = [
      { name: 'signed status callbacks', target: '≥ 0.35×, p99 < 50 ms', minimum: 0.35, maxP99: 50,
        reference: () => bare(WEBHOOK, 'POST', 'status'), gateway: (b) => ours(b, WEBHOOK, 'POST', 'status') },
      { name: 'signed inbound-message callbacks', target: '≥ 0.25×', minimum: 0.25,
        reference: () => bare(WEBHOOK, 'POST', 'inbound'), gateway: (b) => ours(b, WEBHOOK, 'POST', 'inbound') },
      { name: 'POST /api/message/send vs the sandbox called directly', target: '≥ 0.18×', minimum: 0.18,
        reference: () => ({ label: 'sandbox network (reference)', pid: sandbox.pid, body: 'wire',
          side: { port: portOf(sandbox), path: `/v23.0/${big!.phoneNumberId}/messages`, method: 'POST', headers: { authorization: `Bearer ${big!.token}` } } }),
        gateway: (b) => {
          const sided = ours(b, '/api/message/send', 'POST');
          return { ...sided, body: 'send', side: { ...sided.side, rotate: b.senderCookies.map((cookie) => ({ cookie })) } };
        } },
      { name: 'GET /healthz', target: '≈ 1×', minimum: 0, reference: () => bare('/healthz', 'GET'), gateway: (b) => ours(b, '/healthz', 'GET') },
      // Each queues a 64 KB download that the gateway fetches later: only when BENCH_ONLY names it (its downloads would
      // be counted to the CPU of the scenarios after it).
      { name: 'signed inbound media callbacks', target: '≥ 0.25×', minimum: 0.25, optional: true,
        reference: () => bare(WEBHOOK, 'POST', 'inbound-media'), gateway: (b) => ours(b, WEBHOOK, 'POST', 'inbound-media') },
    ];
    const conversations = (b: Build, id: number, query: string, cookie: string): Side =>
      ({ port: portOf(b.gateway), path: `/api/user/${id}/conversations${query}`, method: 'GET', headers: { cookie } });
    const listings: Listing[] = [
      { name: 'conversations, 1,000 messages, ?filter=all (1 client)', target: 'p50 < 2 ms', connections: 1,
        path: (b) => conversations(b, small!.id, '?filter=all', b.smallCookie), check: (p50) => p50 < 2 },
      { name: `conversations, ${MESSAGES.toLocaleString('en-US')} messages, ?filter=all&limit=50 (1 client)`, target: 'worst-round p50 < 15 ms, p99 < 5 × p50',
        connections: 1, path: (b) => conversations(b, big!.id, '?filter=all&limit=50', b.bigCookie), check: (p50, p99) => p50 < 15 && p99 < 5 * p50 },
      { name: `conversations, ${MESSAGES.toLocaleString('en-US')} messages, limit=50 (50 clients at once)`, target: 'p99 < 5 × p50',
        connections: 50, path: (b) => conversations(b, big!.id, '?filter=all&limit=50', b.bigCookie), check: (p50, p99) => p99 < 5 * p50 },
    ];
    const FLOOD = '3 MB flood: non-ASCII callbacks with a wrong signature, 4 at once, /healthz timed meanwhile';
    const selected = <T extends { name: string; optional?: boolean }>(list: T[]) =>
      list.filter((s) => ONLY.test(s.name) && (!s.optional || process.env.BENCH_ONLY !== undefined));

    const runs = new Map<string, Run[]>(); // key: scenario \u0000 side label
    const ratios = new Map<string, number[]>();
    const listingRuns = new Map<string, Run[]>();
    const floodRuns = new Map<string, { big: Run; probe: Summary }[]>();
    // The peak before the first 3 MB flood (the target's figure) and the peak with it.
    const rssBeforeFlood = new Map<string, number>();
    const key = (...parts: string[]) => parts.join('\u0000');
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of selected(throughputs)) {
        // Each round another side goes first, so warm-up, database growth and neighbours' load favour none.
        const sides = [scenario.reference(builds[0]!), ...builds.map((b) => scenario.gateway(b))];
        const order = sides.map((_, i) => sides[(i + round - 1) % sides.length]!);
        const rps = new Map<string, number>();
        for (const side of order) {
          log(`round ${round}/${ROUNDS}: ${scenario.name} — ${side.label}…\n`);
          const job: Job = { kind: 'load', side: side.side, body: side.body, signWith: side.signWith,
            connections: scenario.connections ?? CONNECTIONS, pipelining: scenario.pipelining ?? PIPELINING, seconds: SECONDS };
          if (round === 1 && WARMUP > 0) await ask({ ...job, seconds: WARMUP }); // not counted
          // A gateway's syncs around the run (the reference writes nothing): a stalled run shows whether the disk held it.
          const ofGateway = side !== sides[0];
          const syncsBefore = ofGateway ? await syncCounters(side.side.port) : undefined;
          const { run } = await measured(side.pid, job);
          const syncs = syncsOfRun(syncsBefore, ofGateway ? await syncCounters(side.side.port) : undefined);
          log(`  ${fixed(run.rps, 0)} req/s, CPU ${fixed(run.cpuUs, 0)} µs/request (${fixed(run.loopUs, 0)} on the event loop), p99 ${fixed(run.p99, 1)} ms${syncs}\n`);
          push(runs, key(scenario.name, side.label), run);
          rps.set(side.label, run.rps);
        }
        for (const b of builds) push(ratios, key(scenario.name, b.label), rps.get(b.label)! / rps.get(sides[0]!.label)!);
      }
      for (const listing of selected(listings)) {
        for (const b of round % 2 === 1 ? builds : [...builds].reverse()) {
          log(`round ${round}/${ROUNDS}: ${listing.name} — ${b.label}…\n`);
          const { run } = await measured(b.gateway.pid, { kind: 'load', side: listing.path(b), connections: listing.connections, pipelining: 1, seconds: SECONDS });
          push(listingRuns, key(listing.name, b.label), run);
        }
      }
      if (ONLY.test(FLOOD)) {
        if (round === 1) for (const b of builds) rssBeforeFlood.set(b.label, peakRssMb(b.gateway.pid));
        for (const b of round % 2 === 1 ? builds : [...builds].reverse()) {
          log(`round ${round}/${ROUNDS}: 3 MB flood — ${b.label}…\n`);
          const { answer, run } = await measured(b.gateway.pid, { kind: 'flood', side: { port: portOf(b.gateway), path: WEBHOOK, method: 'POST' },
            body: 'big-unsigned', signWith: APP_SECRET, connections: 4, probe: { port: portOf(b.gateway), path: '/healthz', method: 'GET' },
            seconds: SECONDS, expect: 401 });
          push(floodRuns, b.label, { big: run, probe: answer.probe! });
        }
      }
    }

    // ---- report ----------------------------------------------------------------------------------------------
    const out: string[] = [];
    out.push(`\n${ROUNDS} interleaved rounds of ${SECONDS} s per run; load generator in its own process (raw sockets, `
      + `${CONNECTIONS} connections × ${PIPELINING} pipelined); 2 × ${MESSAGES.toLocaleString('en-US')} + 1,000 messages seeded; node ${process.version}`);
    out.push('Figures: median (min–max) over the rounds. ratio = gateway req/s ÷ reference req/s within the same round. '
      + 'CPU = server CPU time (user + system, all threads, from /proc/<pid>/stat) per request, the figure least moved by other load on the machine; '
      + 'of it on the event loop = the main thread\'s share (/proc/<pid>/task/<pid>/stat), which caps req/s while the other threads (disk syncs, '
      + 'checkpoints, listings) run on another core.\n');
    if (selected(throughputs).length > 0) {
      out.push('| scenario | side | req/s | ratio | server CPU µs/request | of it on the event loop | p50 / p99 ms | errors | target | met |',
        '|---|---|---|---|---|---|---|---|---|---|');
    }
    const verdicts: string[] = [];
    for (const scenario of selected(throughputs)) {
      const sides = [scenario.reference(builds[0]!), ...builds.map((b) => scenario.gateway(b))];
      for (const side of sides) {
        const list = runs.get(key(scenario.name, side.label)) ?? [];
        if (list.length === 0) continue;
        const ratio = ratios.get(key(scenario.name, side.label));
        let met = '';
        if (ratio && scenario.minimum > 0) {
          met = median(ratio) >= scenario.minimum && (scenario.maxP99 === undefined || median(list.map((r) => r.p99)) < scenario.maxP99) ? 'yes' : 'NO';
        }
        out.push(`| ${side === sides[0] ? scenario.name : ''} | ${side.label} | ${spread(list.map((r) => r.rps), 0)} | ${ratio ? spread(ratio, 3) : '1'} | `
          + `${spread(list.map((r) => r.cpuUs), 0)} | ${spread(list.map((r) => r.loopUs), 0)} | ${fixed(median(list.map((r) => r.p50)), 1)} / ${fixed(median(list.map((r) => r.p99)), 1)} | `
          + `${errorsOf(list)} | ${side === sides[0] ? '' : scenario.target} | ${met} |`);
      }
    }
    if (selected(listings).length > 0) {
      out.push('', '| listing | build | p50 ms per round | worst p50 | p99 ms, median (min–max) | server CPU µs/request | target | met in every round |',
        '|---|---|---|---|---|---|---|---|');
    }
    for (const listing of selected(listings)) {
      for (const b of builds) {
        const list = listingRuns.get(key(listing.name, b.label)) ?? [];
        if (list.length === 0) continue;
        out.push(`| ${b === builds[0] ? listing.name : ''} | ${b.label} | ${list.map((r) => fixed(r.p50, 2)).join(', ')} | ${fixed(Math.max(...list.map((r) => r.p50)), 2)} | `
          + `${spread(list.map((r) => r.p99), 1)} | ${spread(list.map((r) => r.cpuUs), 0)} | ${listing.target} | ${list.every((r) => listing.check(r.p50, r.p99)) ? 'yes' : 'NO'} |`);
      }
    }
    if (floodRuns.size > 0) {
      out.push('', `| ${FLOOD} | build | answered/s | server CPU ms per 3 MB body | /healthz p50 ms | /healthz p99 ms | answers |`, '|---|---|---|---|---|---|---|');
      for (const b of builds) {
        const list = floodRuns.get(b.label) ?? [];
        const statuses = list.reduce<Record<string, number>>((all, r) => { for (const [s, c] of Object.entries(r.probe.statuses)) all[`healthz ${s}`] = (all[`healthz ${s}`] ?? 0) + c; return all; }, {});
        out.push(`| | ${b.label} | ${spread(list.map((r) => r.big.rps), 1)} | ${spread(list.map((r) => r.big.cpuUs / 1000), 1)} | `
          + `${spread(list.map((r) => r.probe.p50), 2)} | ${spread(list.map((r) => r.probe.p99), 1)} | `
          + `${list.reduce((a, r) => a + r.big.count, 0)} × 401 expected, ${list.reduce((a, r) => a + r.big.errors, 0)} other; ${JSON.stringify(statuses)} |`);
      }
    }
    out.push('');
    for (const b of builds) {
      const rss = rssBeforeFlood.get(b.label) ?? peakRssMb(b.gateway.pid);
      const withFlood = rssBeforeFlood.has(b.label) ? `; with the 3 MB floods: ${fixed(peakRssMb(b.gateway.pid), 0)} MB` : '';
      out.push(`peak RSS of ${b.label}: ${fixed(rss, 0)} MB (target < 300 MB: ${rss < 300 ? 'yes' : 'NO'})${withFlood}`);
    }
    if (ref) {
      const [before, after] = builds as [Build, Build];
      out.push('', `before → after (${before.label} → ${after.label}), medians:`);
      for (const scenario of selected(throughputs)) {
        const a = runs.get(key(scenario.name, before.label));
        const z = runs.get(key(scenario.name, after.label));
        if (!a || !z) continue;
        const [ra, rz] = [median(ratios.get(key(scenario.name, before.label))!), median(ratios.get(key(scenario.name, after.label))!)];
        const [ca, cz] = [median(a.map((r) => r.cpuUs)), median(z.map((r) => r.cpuUs))];
        const [la, lz] = [median(a.map((r) => r.loopUs)), median(z.map((r) => r.loopUs))];
        const slower = cz > ca * 1.05 || rz < ra * 0.95;
        verdicts.push(`  ${scenario.name}: ${fixed(median(a.map((r) => r.rps)), 0)} → ${fixed(median(z.map((r) => r.rps)), 0)} req/s, ratio ${fixed(ra, 3)} → ${fixed(rz, 3)}, `
          + `CPU ${fixed(ca, 0)} → ${fixed(cz, 0)} µs/request (${cz >= ca ? '+' : ''}${fixed((100 * (cz - ca)) / ca, 0)} %), `
          + `on the event loop ${fixed(la, 0)} → ${fixed(lz, 0)}${slower ? '  SLOWER' : ''}`);
      }
      out.push(...verdicts);
    }
    // The event log's and the send queue's scale scenarios: this tree only, on a gateway of their own (after the others,
    // so their streams, deliveries and queue do not load the scenarios above).
    out.push(...await runScale({ dir, only: ONLY, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, pipelining: PIPELINING,
      appSecret: APP_SECRET, webhook: WEBHOOK, big: big!, small: small!, bodyData: { phoneNumberId: big!.phoneNumberId, wamids: big!.wamids, contacts: big!.contacts, image },
      ask, log, servers, gatewayEnv }));
    console.log(out.join('\n'));
  } finally {
    loadgen.close();
    await Promise.all(servers.map((s) => s.stop()));
    ref?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}
void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
