// The scale scenarios of `npm run bench` (the event log and the send queue), on a gateway of their own with its own
// sandbox (recording arrival times) and a local event receiver, each a process of its own:
// - 1,000 open event streams of one user: how long a new event takes to reach all of them (p50/p99), and the RSS;
// - an event endpoint 100,000 events behind catching up (events/s at the receiver);
// - signed callbacks while the user's events go to 1 endpoint + 1 open stream, against the same user with neither;
// - 10,000 queued sends over 5 users at rate 80 while sync sends, callbacks and listings run, against the same without.
import { request as httpRequest, type ClientRequest } from 'node:http';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client';
import { createUsersRepo } from '../src/db/users-repo';
import { hashPassword } from '../src/services/passwords';
import { createTokenCipher, resolveTokenKey } from '../src/support/token-cipher';
import { maxWindow } from './arrivals';
import { makeBody, sign, type BodyData } from './bodies';
import type { Answer, Job, Side } from './loadgen';
import { cpuSeconds, gatewayNodeFlags, peakRssMb, settledCpuSeconds, startServer, type Running } from './processes';
import { BENCH_PASSWORD, login, type Seeded } from './seed';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const STREAM_EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 20);
const BEHIND = Number(process.env.BENCH_EVENTS_BEHIND ?? 100_000);
const QUEUED = Number(process.env.BENCH_QUEUED ?? 10_000);
const QUEUE_USERS = 5;
const QUEUE_RATE = 80;

export const SCALE_SCENARIOS = {
  streams: `event streams: ${STREAMS.toLocaleString('en-US')} open streams of one user, a new event reaching all`,
  catchUp: `event endpoint catch-up: ${BEHIND.toLocaleString('en-US')} events behind, local receiver`,
  callbacks: 'callbacks with events delivered (1 endpoint + 1 open stream) vs a user with neither',
  queue: `queued sends: ${QUEUED.toLocaleString('en-US')} over ${QUEUE_USERS} users at rate ${QUEUE_RATE} while sends, callbacks and listings run`,
};

export interface ScaleContext {
  dir: string; only: RegExp; rounds: number; seconds: number; connections: number; pipelining: number;
  appSecret: string; webhook: string; big: Seeded; small: Seeded; bodyData: BodyData;
  ask: (job: Job) => Promise<Answer>; log: (line: string) => void; servers: Running[];
  gatewayEnv: (sandboxUrl: string, databasePath: string) => Record<string, string>;
}

const portOf = (running: Running) => Number(new URL(running.url).port);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–');
const spread = (values: number[], digits: number) => (values.length <= 1 ? fixed(values[0] ?? Number.NaN, digits)
  : `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})`);
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** The scale database: the seeded one, plus the queue's users, `BEHIND` events of the small user, and no pacing on
 * the big user's synchronous sends (the send scenario measures the gateway, not the rate). */
async function prepare(path: string, small: Seeded, big: Seeded): Promise<{ email: string; phoneNumberId: string; token: string }[]> {
  const db = openDatabase(path);
  const users = createUsersRepo(db, createTokenCipher(resolveTokenKey(undefined, path)));
  const passwordHash = await hashPassword(BENCH_PASSWORD);
  const queueUsers = Array.from({ length: QUEUE_USERS }, (_, i) => ({ email: `queue${i}@bench.local`, phoneNumberId: `20000000000000${i}`, token: `bench-token-queue-${i}` }));
  for (const u of queueUsers) {
    const created = users.create({ email: u.email, passwordHash, messagingPhoneNumberId: u.phoneNumberId, messagingToken: u.token,
      monthlyCredits: 100_000_000, messagingRate: QUEUE_RATE }, new Date());
    if (!created.ok) throw new Error(`scale seed: ${u.email}`);
  }
  const sqlite = db.$client;
  sqlite.prepare('UPDATE users SET messaging_rate = 100000 WHERE id = ?').run(big.id);
  const ids = sqlite.prepare('SELECT id FROM messages WHERE user_id = ? ORDER BY id LIMIT 1000').pluck().all(small.id) as number[];
  const insert = sqlite.prepare("INSERT INTO events (user_id, seq, type, message_id, contact_id, status, created_at) VALUES (?, ?, 'message.received', ?, NULL, NULL, ?)");
  const now = Date.now();
  sqlite.transaction(() => {
    for (let seq = 1; seq <= BEHIND; seq++) insert.run(small.id, seq, ids[seq % ids.length]!, now);
    sqlite.prepare('INSERT INTO event_counters (user_id, last_seq) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET last_seq = excluded.last_seq').run(small.id, BEHIND);
  })();
  sqlite.close();
  return queueUsers;
}

async function api(url: string, cookie: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url + path, { method, headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

/** An open event stream: `seen` holds each event's type and when its chunk arrived (ms, performance.now). */
interface Stream { request: ClientRequest; seen: { type: string; at: number }[] }
function openStream(gateway: Running, userId: number, cookie: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const seen: Stream['seen'] = [];
    const request = httpRequest({ host: '127.0.0.1', port: portOf(gateway), path: `/api/user/${userId}/events/stream`, // from the next event on
      headers: { cookie, accept: 'text/event-stream' }, agent: false });
    request.on('response', (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream: ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const at = performance.now();
        for (const match of chunk.matchAll(/^event: (\S+)$/gm)) seen.push({ type: match[1]!, at });
      });
      response.on('error', () => undefined);
      resolve({ request, seen });
    });
    request.on('error', reject);
    request.end();
  });
}

/** Posts one signed callback body of `kind` to the gateway's webhook. */
async function callback(gateway: Running, ctx: ScaleContext, kind: 'inbound' | 'status'): Promise<void> {
  const body = makeBody(kind, ctx.bodyData);
  const response = await fetch(gateway.url + ctx.webhook, { method: 'POST', body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(body, ctx.appSecret) } });
  if (!response.ok) throw new Error(`callback: ${response.status}`);
}

export async function runScale(ctx: ScaleContext): Promise<string[]> {
  const wanted = Object.values(SCALE_SCENARIOS).filter((name) => ctx.only.test(name));
  if (wanted.length === 0) return [];
  const out: string[] = ['', '### Scale scenarios (event log and send queue; a gateway of their own)', ''];
  const { log, big, small } = ctx;
  log('scale: preparing the database…\n');
  cpSync(join(ctx.dir, 'seed'), join(ctx.dir, 'scale'), { recursive: true });
  const databasePath = join(ctx.dir, 'scale', 'bench.db');
  const queueUsers = await prepare(databasePath, small, big);
  const sandbox = await startServer(join(__dirname, 'sandbox-process.js'), {
    SANDBOX_PHONE_NUMBER_ID: big.phoneNumberId, SANDBOX_TOKEN: big.token, SANDBOX_RECORD: '1',
    SANDBOX_ACCOUNTS: queueUsers.map((u) => `${u.phoneNumberId}:${u.token}`).join(','),
  }, '/_sandbox/users');
  ctx.servers.push(sandbox);
  const receiver = await startServer(join(__dirname, 'receiver-process.js'), {}, '/count');
  ctx.servers.push(receiver);
  const script = join(__dirname, '..', 'src', 'server.js');
  const gateway = await startServer(script, {
    ...ctx.gatewayEnv(sandbox.url, databasePath),
    // The stream cap raised for this process only (default 5 per user).
    EVENT_STREAMS_PER_USER: String(STREAMS + 10), EVENT_ENDPOINTS_ALLOW_HTTP: 'true', EVENT_ENDPOINTS_ALLOWED_CIDRS: '127.0.0.1/32',
  }, '/healthz', gatewayNodeFlags(script));
  ctx.servers.push(gateway);
  const bigCookie = await login(gateway.url, 'big@bench.local');
  const smallCookie = await login(gateway.url, 'small@bench.local');
  const hookUrl = `${receiver.url}/hook`;
  const receiverCount = async () => (await (await fetch(receiver.url + '/count')).json()) as { events: number; posts: number; maxId: number; firstAt: number; lastAt: number };

  // ---- 1,000 open streams -----------------------------------------------------------------------------------------
  if (ctx.only.test(SCALE_SCENARIOS.streams)) {
    log(`scale: opening ${STREAMS} event streams…\n`);
    const rssBefore = rssMb(gateway.pid);
    const streams: Stream[] = [];
    for (let i = 0; i < STREAMS; i += 50) streams.push(...await Promise.all(Array.from({ length: Math.min(50, STREAMS - i) }, () => openStream(gateway, big.id, bigCookie))));
    await sleep(500);
    const rssOpen = rssMb(gateway.pid);
    const latencies: number[] = [];
    let missed = 0;
    const cpuBefore = await settledCpuSeconds(gateway.pid);
    for (let e = 0; e < STREAM_EVENTS; e++) {
      for (const s of streams) s.seen.length = 0;
      const sent = performance.now();
      await callback(gateway, ctx, 'inbound');
      const deadline = performance.now() + 5000;
      while (performance.now() < deadline && !streams.every((s) => s.seen.some((x) => x.type === 'message.received'))) await sleep(5);
      for (const s of streams) {
        const hit = s.seen.find((x) => x.type === 'message.received');
        if (hit) latencies.push(hit.at - sent);
        else missed += 1;
      }
      await sleep(100);
    }
    const cpu = (await settledCpuSeconds(gateway.pid)) - cpuBefore;
    const rssAfter = rssMb(gateway.pid);
    for (const s of streams) s.request.destroy();
    const p99 = quantile(latencies, 0.99);
    out.push(`| ${SCALE_SCENARIOS.streams} | value |`, '|---|---|',
      `| events sent (one signed inbound callback each, 100 ms apart) | ${STREAM_EVENTS} |`,
      `| deliveries (streams × events) received / missed within 5 s | ${latencies.length} / ${missed} |`,
      `| callback sent → event read by a stream, p50 / p99 / max ms | ${fixed(quantile(latencies, 0.5), 1)} / ${fixed(p99, 1)} / ${fixed(Math.max(...latencies), 1)} |`,
      `| target p99 < 1,000 ms | ${p99 < 1000 && missed === 0 ? 'yes' : 'NO'} |`,
      `| gateway RSS MB: before / ${STREAMS} open / after the events | ${fixed(rssBefore, 0)} / ${fixed(rssOpen, 0)} / ${fixed(rssAfter, 0)} (target < 300: ${rssAfter < 300 ? 'yes' : 'NO'}) |`,
      `| gateway CPU ms per event (fan-out to ${STREAMS} streams included) | ${fixed((cpu * 1000) / STREAM_EVENTS, 1)} |`, '');
    await sleep(500);
  }

  // ---- an endpoint 100,000 events behind ---------------------------------------------------------------------------
  if (ctx.only.test(SCALE_SCENARIOS.catchUp)) {
    log(`scale: an endpoint ${BEHIND} events behind catching up…\n`);
    const created = await api(gateway.url, smallCookie, 'POST', `/api/user/${small.id}/event-endpoints`, { url: hookUrl, description: 'bench catch-up' });
    if (created.status !== 201) throw new Error(`endpoint: ${created.status} ${JSON.stringify(created.json)}`);
    await fetch(receiver.url + '/reset', { method: 'POST' });
    const cpuBefore = await settledCpuSeconds(gateway.pid);
    const started = Date.now();
    const replay = await api(gateway.url, smallCookie, 'POST', `/api/user/${small.id}/event-endpoints/${created.json.id}/replay`, { after: 0 });
    if (replay.status !== 200) throw new Error(`replay: ${replay.status} ${JSON.stringify(replay.json)}`);
    const deadline = Date.now() + 300_000;
    let count = await receiverCount();
    while (count.maxId < BEHIND && Date.now() < deadline) {
      await sleep(200);
      count = await receiverCount();
    }
    const seconds = (count.lastAt - started) / 1000;
    const cpu = cpuSeconds(gateway.pid) - cpuBefore;
    await api(gateway.url, smallCookie, 'DELETE', `/api/user/${small.id}/event-endpoints/${created.json.id}`);
    const rate = count.events / seconds;
    out.push(`| ${SCALE_SCENARIOS.catchUp} | value |`, '|---|---|',
      `| events received (last id ${count.maxId}) in POSTs | ${count.events} in ${count.posts} (${fixed(count.events / Math.max(count.posts, 1), 0)} per batch) |`,
      `| replay → last event at the receiver | ${fixed(seconds, 1)} s |`,
      `| events/s (target ≥ 2,000) | ${fixed(rate, 0)} (${rate >= 2000 && count.maxId >= BEHIND ? 'yes' : 'NO'}) |`,
      `| gateway CPU µs per event | ${fixed((cpu * 1e6) / Math.max(count.events, 1), 1)} |`, '');
  }

  // ---- callbacks with events delivered vs not ---------------------------------------------------------------------
  if (ctx.only.test(SCALE_SCENARIOS.callbacks)) {
    const kinds = [['signed status callbacks', 'status'], ['signed inbound-message callbacks', 'inbound']] as const;
    const results = new Map<string, { rps: number; cpuUs: number; p99: number }[]>();
    const ratios = new Map<string, number[]>();
    const side: Side = { port: portOf(gateway), path: ctx.webhook, method: 'POST' };
    for (let round = 1; round <= ctx.rounds; round++) {
      for (const [name, body] of kinds) {
        const rps = new Map<string, number>();
        for (const on of round % 2 === 1 ? [false, true] : [true, false]) {
          const label = on ? '1 endpoint + 1 open stream' : 'no endpoint, no stream';
          log(`round ${round}/${ctx.rounds}: ${name} — ${label}…\n`);
          let endpointId: number | undefined;
          let stream: Stream | undefined;
          if (on) {
            const created = await api(gateway.url, bigCookie, 'POST', `/api/user/${big.id}/event-endpoints`, { url: hookUrl, description: 'bench' });
            if (created.status !== 201) throw new Error(`endpoint: ${created.status}`);
            endpointId = created.json.id;
            stream = await openStream(gateway, big.id, bigCookie);
          }
          const job: Job = { kind: 'load', side, body, signWith: ctx.appSecret, connections: ctx.connections, pipelining: ctx.pipelining, seconds: ctx.seconds };
          if (round === 1) await ctx.ask({ ...job, seconds: 2 });
          const before = await settledCpuSeconds(gateway.pid);
          const r = (await ctx.ask(job)).result!;
          const cpu = (await settledCpuSeconds(gateway.pid)) - before; // the deliveries the run caused included
          if (on) {
            stream!.request.destroy();
            await api(gateway.url, bigCookie, 'DELETE', `/api/user/${big.id}/event-endpoints/${endpointId}`);
          }
          const key = `${name}\u0000${label}`;
          results.set(key, [...(results.get(key) ?? []), { rps: r.rps, cpuUs: (cpu / Math.max(r.count, 1)) * 1e6, p99: r.p99 }]);
          rps.set(label, r.rps);
        }
        ratios.set(name, [...(ratios.get(name) ?? []), rps.get('1 endpoint + 1 open stream')! / rps.get('no endpoint, no stream')!]);
      }
    }
    out.push(`| ${SCALE_SCENARIOS.callbacks} | side | req/s | server CPU µs/request (deliveries included) | p99 ms | with ÷ without req/s (target ≥ 0.90) |`,
      '|---|---|---|---|---|---|');
    for (const [name] of kinds) {
      for (const label of ['no endpoint, no stream', '1 endpoint + 1 open stream']) {
        const list = results.get(`${name}\u0000${label}`) ?? [];
        const ratio = ratios.get(name) ?? [];
        out.push(`| ${label === 'no endpoint, no stream' ? name : ''} | ${label} | ${spread(list.map((x) => x.rps), 0)} | ${spread(list.map((x) => x.cpuUs), 0)} | `
          + `${fixed(median(list.map((x) => x.p99)), 1)} | ${label === 'no endpoint, no stream' ? '' : `${spread(ratio, 3)} (${median(ratio) >= 0.9 ? 'yes' : 'NO'})`} |`);
      }
    }
    out.push('');
  }

  // ---- 10,000 queued sends while the other scenarios run ----------------------------------------------------------
  if (ctx.only.test(SCALE_SCENARIOS.queue)) {
    const cookies = await Promise.all(queueUsers.map((u) => login(gateway.url, u.email)));
    const loads: { name: string; side: Side; body?: 'status' | 'send'; connections: number; pipelining: number }[] = [
      { name: 'signed status callbacks', side: { port: portOf(gateway), path: ctx.webhook, method: 'POST' }, body: 'status', connections: ctx.connections, pipelining: ctx.pipelining },
      { name: 'POST /api/message/send', side: { port: portOf(gateway), path: '/api/message/send', method: 'POST', headers: { cookie: bigCookie } }, body: 'send', connections: ctx.connections, pipelining: ctx.pipelining },
      { name: 'conversations listing, limit=50 (4 clients)', side: { port: portOf(gateway), path: `/api/user/${big.id}/conversations?filter=all&limit=50`, method: 'GET', headers: { cookie: bigCookie } }, connections: 4, pipelining: 1 },
    ];
    const runs = new Map<string, { rps: number; p99: number }[]>();
    const kept = new Map<string, number[]>();
    const numberRates: number[] = [];
    const ratesAfterLoads: number[] = [];
    let worstWindow = 0;
    const drains: string[] = [];
    const perUser = Math.ceil(QUEUED / QUEUE_USERS);
    for (let round = 1; round <= ctx.rounds; round++) {
      await fetch(sandbox.url + '/_sandbox/reset', { method: 'POST' });
      const without = new Map<string, number>();
      for (const load of loads) {
        log(`round ${round}/${ctx.rounds}: ${load.name} — queue idle…\n`);
        const job: Job = { kind: 'load', side: load.side, body: load.body, signWith: load.body === 'status' ? ctx.appSecret : undefined, connections: load.connections, pipelining: load.pipelining, seconds: ctx.seconds };
        if (round === 1) await ctx.ask({ ...job, seconds: 2 });
        const r = (await ctx.ask(job)).result!;
        runs.set(`${load.name}\u0000idle`, [...(runs.get(`${load.name}\u0000idle`) ?? []), { rps: r.rps, p99: r.p99 }]);
        without.set(load.name, r.rps);
      }
      log(`round ${round}/${ctx.rounds}: queueing ${perUser * QUEUE_USERS} messages…\n`);
      const queueStart = Date.now();
      await Promise.all(cookies.map(async (cookie, u) => {
        for (let from = 0; from < perUser; from += 1000) {
          const messages = Array.from({ length: Math.min(1000, perUser - from) }, (_, k) => ({
            to: `1666${u}${String(round).padStart(2, '0')}${String(from + k).padStart(5, '0')}`, type: 'text', text: { body: `queued ${from + k}` } }));
          const res = await api(gateway.url, cookie, 'POST', '/api/message/batch', { messages });
          if (res.status !== 202) throw new Error(`batch: ${res.status}`);
        }
      }));
      const queuedIn = (Date.now() - queueStart) / 1000;
      const loadsStart = Date.now();
      for (const load of loads) {
        log(`round ${round}/${ctx.rounds}: ${load.name} — queue draining…\n`);
        const job: Job = { kind: 'load', side: load.side, body: load.body, signWith: load.body === 'status' ? ctx.appSecret : undefined, connections: load.connections, pipelining: load.pipelining, seconds: ctx.seconds };
        const r = (await ctx.ask(job)).result!;
        runs.set(`${load.name}\u0000queue`, [...(runs.get(`${load.name}\u0000queue`) ?? []), { rps: r.rps, p99: r.p99 }]);
        kept.set(load.name, [...(kept.get(load.name) ?? []), r.rps / without.get(load.name)!]);
      }
      const loadsEnd = Date.now();
      // Wait for the queue to drain: every queued message reached the sandbox.
      const queueIds = new Set(queueUsers.map((u) => u.phoneNumberId));
      let arrivals: { id: string; at: number }[] = [];
      const deadline = Date.now() + 600_000;
      for (;;) {
        const recorded = (await (await fetch(sandbox.url + '/_sandbox/requests')).json()) as { requests: { path: string; at: number }[] };
        arrivals = recorded.requests.map((r) => ({ id: /\/([0-9]+)\/messages$/.exec(r.path)?.[1] ?? '', at: r.at })).filter((r) => queueIds.has(r.id));
        if (arrivals.length >= perUser * QUEUE_USERS || Date.now() > deadline) break;
        await sleep(1000);
      }
      const lastArrival = Math.max(...arrivals.map((a) => a.at));
      drains.push(`round ${round}: queued in ${fixed(queuedIn, 1)} s; the loads ran ${fixed((loadsStart - queueStart) / 1000, 1)}–${fixed((loadsEnd - queueStart) / 1000, 1)} s `
        + `and the queue drained at ${fixed((lastArrival - queueStart) / 1000, 1)} s after queueing began (${arrivals.length} sent)`);
      for (const id of queueIds) {
        const times = arrivals.filter((a) => a.id === id).map((a) => a.at).sort((a, b) => a - b);
        const rate = (list: number[]) => ((list.length - 1) * 1000) / (list.at(-1)! - list[0]!);
        if (times.length > 1) numberRates.push(rate(times));
        // Once the loads ended: the pacer's own figure, the CPU no longer taken by the loads.
        const after = times.filter((at) => at >= loadsEnd);
        if (after.length > 80) ratesAfterLoads.push(rate(after));
        worstWindow = Math.max(worstWindow, maxWindow(times));
      }
    }
    // The scheduler costs nothing while every queue is empty, or paused: the whole gateway's CPU over 5 idle seconds.
    const idleCpuMsPerSecond = async () => {
      const from = await settledCpuSeconds(gateway.pid);
      await sleep(5000);
      return ((cpuSeconds(gateway.pid) - from) * 1000) / 5;
    };
    log('queue: CPU while every queue is empty, then while one is paused…\n');
    const emptyMs = await idleCpuMsPerSecond();
    await fetch(sandbox.url + '/_sandbox/behaviours', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queue: [{ kind: 'fail', error: 'throttled', retryAfter: 600 }] }) });
    const paused = await api(gateway.url, cookies[0]!, 'POST', '/api/message/batch', {
      messages: Array.from({ length: 100 }, (_, k) => ({ to: `17770${String(k).padStart(5, '0')}`, type: 'text', text: { body: `paused ${k}` } })) });
    if (paused.status !== 202) throw new Error(`batch: ${paused.status}`);
    await sleep(2000); // its first call is answered 130429 with Retry-After 600: the number's queue pauses
    const pausedMs = await idleCpuMsPerSecond();
    const pausedCalls = ((await (await fetch(sandbox.url + '/_sandbox/requests')).json()) as { requests: { path: string; body?: string }[] }).requests
      .filter((r) => r.path.endsWith(`/${queueUsers[0]!.phoneNumberId}/messages`) && (r.body ?? '').includes('paused ')).length;
    out.push(`| ${SCALE_SCENARIOS.queue} | queue idle req/s | while ${QUEUED.toLocaleString('en-US')} drain req/s | kept (with ÷ without, same round) | p99 ms idle / draining |`,
      '|---|---|---|---|---|');
    for (const load of loads) {
      const idle = runs.get(`${load.name}\u0000idle`) ?? [];
      const busy = runs.get(`${load.name}\u0000queue`) ?? [];
      out.push(`| ${load.name} | ${spread(idle.map((x) => x.rps), 0)} | ${spread(busy.map((x) => x.rps), 0)} | ${spread(kept.get(load.name) ?? [], 3)} | `
        + `${fixed(median(idle.map((x) => x.p99)), 1)} / ${fixed(median(busy.map((x) => x.p99)), 1)} |`);
    }
    const low = Math.min(...numberRates);
    out.push('', `queue at the sandbox, per number and round: rate ${spread(numberRates, 2)}/s (target within 2 % of ${QUEUE_RATE}: `
      + `${low >= QUEUE_RATE * 0.98 ? 'yes' : 'NO'}); once the loads ended: ${spread(ratesAfterLoads, 2)}/s; `
      + `busiest 1 s window ${worstWindow} (never above ${QUEUE_RATE}: ${worstWindow <= QUEUE_RATE ? 'yes' : 'NO'})`, ...drains,
    `the gateway's CPU at rest, all of it (its other timers included; clock ticks of 10 ms over 5 s: 2 ms/s steps): every queue empty `
      + `${fixed(emptyMs, 0)} ms/s; 100 messages on a number paused by 130429 (Retry-After 600 s) ${fixed(pausedMs, 0)} ms/s `
      + `(calls of those at the sandbox: ${pausedCalls} of 100)`, '');
  }
  out.push(`peak RSS of the scale gateway: ${fixed(peakRssMb(gateway.pid), 0)} MB`);
  return out;
}
