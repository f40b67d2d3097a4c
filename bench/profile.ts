// `npm run bench:profile -- [status|inbound|send|healthz|listing|big-listing] [--against <git ref>]`: a CPU profile (node --cpu-prof) of the
// gateway under one scenario's load from the benchmark's load generator, of this tree or of another ref's build.
// Prints the top self-time functions and the self time per file; the profile stays in PROFILE_DIR when set
// (BENCH_SECONDS of load, BENCH_MESSAGES seeded).
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRef, type RefBuild } from './against';
import type { BodyKind } from './bodies';
import { startLoadGenerator } from './loadgen-client';
import { bigUser, callbacksUser, login, seed, senders, smallUser, unpaced } from './seed';
import { cpuSeconds, gatewayNodeFlags, startServer, type Running } from './processes';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }

const APP_SECRET = 'bench-app-secret';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOP = Number(process.env.PROFILE_TOP ?? 30);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);

/** Self time per function and per file, over the samples of the last `seconds` before the profile ended (the load). */
function report(file: string, seconds: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; endTime: number };
  const hitsOf = new Map<number, number>();
  let at = profile.endTime;
  for (let i = profile.samples.length - 1; i >= 0; i--) {
    if (at < profile.endTime - seconds * 1e6) break;
    hitsOf.set(profile.samples[i]!, (hitsOf.get(profile.samples[i]!) ?? 0) + 1);
    at -= profile.timeDeltas[i]!;
  }
  const total = [...hitsOf.values()].reduce((sum, hits) => sum + hits, 0);
  const bySite = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = hitsOf.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url.split('/').slice(-2).join('/');
    const site = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + hits);
    const module = url === '' ? `(${functionName})` : url.includes('node_modules/') ? where.split('/').slice(0, where.startsWith('@') ? 2 : 1).join('/') : where;
    byFile.set(module, (byFile.get(module) ?? 0) + hits);
  }
  const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP)
    .map(([site, hits]) => `${((100 * hits) / total).toFixed(1).padStart(5)} %  ${site}`);
  return ['self time by function:', ...top(bySite), '', 'self time by file or package:', ...top(byFile)];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const scenario = (args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--against') ?? 'status') as 'status' | 'inbound' | 'send' | 'healthz' | 'listing' | 'big-listing';
  const againstAt = args.indexOf('--against');
  const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
  const profiles = process.env.PROFILE_DIR ?? join(dir, 'profiles');
  const loadgen = startLoadGenerator();
  const servers: Running[] = [];
  let ref: RefBuild | undefined;
  try {
    if (againstAt !== -1) ref = buildRef(join(__dirname, '..', '..'), args[againstAt + 1]!, (line) => process.stderr.write(line));
    const databasePath = join(dir, 'bench.db');
    // Sends spread over 4 numbers, as in `npm run bench`: one number's pace (1,000/s at most) would cap the load.
    // The bench's users: callbacks go to a user of their own, the big one is listed.
    const [user, small, callbacks, ...sending] = await seed(databasePath,
      [bigUser(MESSAGES, MESSAGES / 2), smallUser(), callbacksUser(MESSAGES), ...senders(4)], ref?.migrations);
    const sandbox = await startServer(join(__dirname, 'sandbox-process.js'), { SANDBOX_PHONE_NUMBER_ID: callbacks!.phoneNumberId,
      SANDBOX_TOKEN: callbacks!.token, SANDBOX_ACCOUNTS: [user!, ...sending].map((u) => `${u.phoneNumberId}:${u.token}`).join(',') }, '/_sandbox/requests');
    servers.push(sandbox);
    const script = ref?.server ?? join(__dirname, '..', 'src', 'server.js');
    const gateway = await startServer(script, {
      DATABASE_PATH: databasePath, LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: APP_SECRET, JWT_SECRET: 'profile-jwt-secret-profile-jwt-secret-01',
      MESSAGING_API_URL: `${sandbox.url}/v23.0`, MALLOC_ARENA_MAX: '2',
    }, '/healthz', [...gatewayNodeFlags(script), '--cpu-prof', `--cpu-prof-dir=${profiles}`]);
    for (const u of [user!, ...sending]) await unpaced(gateway.url, u.id);
    const senderCookies = await Promise.all(sending.map((_, i) => login(gateway.url, `sender${i + 1}@bench.local`)));
    await loadgen.ask({ kind: 'setup', data: { phoneNumberId: callbacks!.phoneNumberId, wamids: callbacks!.wamids, contacts: callbacks!.contacts,
      image: { id: 'none', sha256: createHash('sha256').digest('base64') } } });
    const port = Number(new URL(gateway.url).port);
    // healthz: what every request costs (hooks, headers, logging) with no work of its own.
    // listing, big-listing: the 1,000-message user's conversations, or a page of 50 of the big user's, one client after
    // another, as the bench's small and big listings.
    const listing = scenario === 'listing' || scenario === 'big-listing';
    const body: BodyKind | undefined = scenario === 'healthz' || listing ? undefined : scenario;
    const lister = scenario === 'big-listing' ? { user: user!, email: 'big@bench.local', query: '?filter=all&limit=50' }
      : { user: small!, email: 'small@bench.local', query: '?filter=all' };
    const listerCookie = listing ? await login(gateway.url, lister.email) : '';
    const webhook = { port, path: '/api/messaging/webhook', method: 'POST' as const };
    const side = listing ? { port, path: `/api/user/${lister.user.id}/conversations${lister.query}`, method: 'GET' as const, headers: { cookie: listerCookie } }
      : scenario === 'send' ? { port, path: '/api/message/send', method: 'POST' as const, rotate: senderCookies.map((cookie) => ({ cookie })) }
      : scenario === 'healthz' ? { port, path: '/healthz', method: 'GET' as const }
      : webhook;
    const signWith = scenario === 'status' || scenario === 'inbound' ? APP_SECRET : undefined;
    const load = { kind: 'load' as const, side, body, signWith, ...(listing ? { connections: 1, pipelining: 1 } : { connections: 32, pipelining: 2 }) };
    // PROFILE_INBOUND_FIRST=<s>: that long of signed inbound callbacks to the callbacks' user before (a database and WAL
    // grown as in the bench's later rounds, where the inbound scenario runs between the status ones).
    const inboundFirst = Number(process.env.PROFILE_INBOUND_FIRST ?? 0);
    if (inboundFirst > 0) {
      await loadgen.ask({ kind: 'load', side: webhook, body: 'inbound', signWith: APP_SECRET, connections: 32, pipelining: 2, seconds: inboundFirst });
    }
    // Warm-up first (JIT); the report counts only the samples of the measured load, at the profile's end.
    await loadgen.ask({ ...load, seconds: 3 });
    const before = cpuSeconds(gateway.pid);
    const { result } = await loadgen.ask({ ...load, seconds: SECONDS });
    const cpu = cpuSeconds(gateway.pid) - before;
    console.log(`${ref?.label ?? 'this tree'}, ${scenario}: ${result!.rps.toFixed(0)} req/s, ${((cpu / result!.count) * 1e6).toFixed(0)} µs CPU/request `
      + `(profiling included), p50 ${result!.p50.toFixed(1)} ms, p99 ${result!.p99.toFixed(1)} ms, errors ${result!.errors}`);
    await gateway.stop();
    // One profile per thread: the main thread's is the largest.
    const file = readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile'))
      .sort((a, b) => statSync(join(profiles, b)).size - statSync(join(profiles, a)).size)[0];
    if (!file) throw new Error('no profile written');
    console.log(`profile: ${join(profiles, file)}\n${report(join(profiles, file), SECONDS - 0.5).join('\n')}`);
  } finally {
    loadgen.close();
    await Promise.all(servers.map((s) => s.stop()));
    ref?.remove();
    if (!process.env.PROFILE_DIR) rmSync(dir, { recursive: true, force: true });
  }
}
void main();
