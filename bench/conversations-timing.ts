// Local timing check of GET /api/user/{id}/conversations on the benchmark's seeded database:
// `npm run bench:latency -- [messages] [contacts] [runs]`. Prints p50/p99 of single sequential requests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app';
import { parseConfig } from '../src/config';
import { bigUser, seed } from './seed';

const MESSAGES = Number(process.argv[2] ?? 100_000);
const CONTACTS = Number(process.argv[3] ?? 500);
const RUNS = Number(process.argv[4] ?? 100);

const QUERIES = ['', '?limit=10', '?type=text&filter=last_7_days', '?type=template', '?filter=today', '?filter=this_month&limit=200',
  '?contact=15550000007', '?before=2000-01-01T00:00:00Z'];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-timing-'));
  try {
    const databasePath = join(dir, 'timing.db');
    const [seeded] = await seed(databasePath, [{ ...bigUser(MESSAGES), contacts: CONTACTS }]);
    const app = await buildApp(parseConfig({ DATABASE_PATH: databasePath, LOG_LEVEL: 'silent', TIMEZONE: 'Europe/Berlin',
      JWT_SECRET: 'timing-secret-timing-secret-timing-0123' }));
    const headers = { authorization: `Bearer ${app.issueToken(app.usersRepo.findById(seeded!.id)!)}` };
    console.log(`${MESSAGES} messages, ${CONTACTS} contacts; ${RUNS} sequential requests each (app.inject, JSON included)`);
    for (const query of QUERIES) {
      const url = `/api/user/${seeded!.id}/conversations${query}`;
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        const res = await app.inject({ method: 'GET', url, headers });
        times.push(performance.now() - start);
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
        bytes = res.body.length;
      }
      times.sort((a, b) => a - b);
      const at = (p: number) => times[Math.floor(p * (times.length - 1))]!.toFixed(2);
      console.log(`${(query || '(no query)').padEnd(32)} p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  ${(bytes / 1024).toFixed(0)} KB`);
    }
    await app.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
void main();
