// `npm run bench:profile-send`: a CPU profile of the gateway under the send load (node --cpu-prof), written to
// PROFILE_DIR (default: a temp folder); prints the top self-time entries.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './load';
import { BENCH_PASSWORD, bigUser, seed } from './seed';
import { startServer } from './processes';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number }

function topEntries(file: string, count: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[] };
  const total = profile.nodes.reduce((sum, node) => sum + node.hitCount, 0);
  const bySite = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.hitCount);
  }
  return [...bySite].sort((a, b) => b[1] - a[1]).slice(0, count).map(([site, hits]) => `${((100 * hits) / total).toFixed(1).padStart(5)} %  ${site}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
  const profiles = process.env.PROFILE_DIR ?? join(dir, 'profiles');
  try {
    const databasePath = join(dir, 'bench.db');
    const [user] = await seed(databasePath, [bigUser(10_000)]);
    const sandbox = await startServer(join(__dirname, 'sandbox-process.js'),
      { SANDBOX_PHONE_NUMBER_ID: user!.phoneNumberId, SANDBOX_TOKEN: user!.token }, '/_sandbox/requests');
    const gateway = await startServer(join(__dirname, '..', 'src', 'server.js'), {
      DATABASE_PATH: databasePath, LOG_LEVEL: 'warn', MESSAGING_APP_SECRET: 'profile', JWT_SECRET: 'profile-jwt-secret-profile-jwt-secret-01',
      MESSAGING_API_URL: `${sandbox.url}/v23.0`,
    }, '/healthz', ['--cpu-prof', `--cpu-prof-dir=${profiles}`]);
    const login = await fetch(gateway.url + '/api/login', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'big@bench.local', password: BENCH_PASSWORD }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    let n = 0;
    const result = await run({ url: gateway.url, path: '/api/message/send', headers: { cookie } }, {
      method: 'POST', connections: 50, seconds: Number(process.env.BENCH_SECONDS ?? 10),
      body: () => JSON.stringify({ to: String(15550000000 + (n++ % 500)), type: 'text', text: { body: `profile ${n}` } }),
    });
    console.log(`sends: ${result.rps.toFixed(0)}/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.errors}`);
    await gateway.stop();
    await sandbox.stop();
    const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('no profile written');
    console.log(`profile: ${join(profiles, file)}\n${topEntries(join(profiles, file), 25).join('\n')}`);
  } finally {
    if (!process.env.PROFILE_DIR) rmSync(dir, { recursive: true, force: true });
  }
}
void main();
