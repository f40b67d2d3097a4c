// `npm run bench:pacing`: 10,000 queued messages over 5 users at messaging_rate 80 against the sandbox network. Prints
// each phone number's measured rate at the sandbox (from its recorded arrival times) and its busiest 1 s window; exits 1
// when a window holds more than the rate. The gateway runs in this process, the sandbox in its own (as a network would:
// its arrival times are not held up by the gateway's event loop).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app';
import { parseConfig } from '../src/config';
import type { RecordedRequest } from '../src/sandbox/server';
import { hashPassword } from '../src/services/passwords';
import { maxWindow } from './arrivals';
import { startServer } from './processes';

const USERS = Number(process.env.BENCH_PACING_USERS ?? 5);
const MESSAGES = Number(process.env.BENCH_PACING_MESSAGES ?? 10_000);
const RATE = Number(process.env.BENCH_PACING_RATE ?? 80);
const BATCH = 1000;


async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-pacing-'));
  const accounts = Array.from({ length: USERS }, (_, i) => ({ phoneNumberId: `10000000000000${i}`, token: `EAAbench-token-${i}` }));
  const sandbox = await startServer(join(__dirname, 'sandbox-process.js'), {
    SANDBOX_PHONE_NUMBER_ID: accounts[0]!.phoneNumberId, SANDBOX_TOKEN: accounts[0]!.token, SANDBOX_RECORD: '1',
    SANDBOX_ACCOUNTS: accounts.slice(1).map((a) => `${a.phoneNumberId}:${a.token}`).join(','),
  }, '/_sandbox/users');
  const config = parseConfig({
    DATABASE_PATH: join(dir, 'bench.db'), LOG_LEVEL: 'warn', JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0',
    MESSAGING_API_URL: `${sandbox.url}/v23.0`,
  });
  const app = await buildApp(config);
  try {
    await app.ready();
    const passwordHash = await hashPassword('bench-password');
    const users = accounts.map(({ phoneNumberId, token }, i) => {
      const result = app.usersRepo.create({
        email: `pacing${i}@example.com`, passwordHash, messagingToken: token, messagingPhoneNumberId: phoneNumberId,
        monthlyCredits: MESSAGES, messagingRate: RATE,
      }, app.now());
      if (!result.ok) throw new Error('user ' + result.conflict);
      return result.user;
    });
    const perUser = Math.ceil(MESSAGES / USERS);
    const started = performance.now();
    for (const user of users) {
      const auth = { authorization: `Bearer ${app.issueToken(user)}` };
      for (let from = 0; from < perUser; from += BATCH) {
        const messages = Array.from({ length: Math.min(BATCH, perUser - from) }, (_, k) => ({
          to: `1555${String(user.id).padStart(3, '0')}${String((from + k) % 10_000).padStart(4, '0')}`, type: 'text', text: { body: `bench ${from + k}` },
        }));
        const res = await app.inject({ method: 'POST', url: '/api/message/batch', headers: auth, payload: { messages } });
        if (res.statusCode !== 202) throw new Error(`batch: ${res.statusCode} ${res.body}`);
      }
    }
    const queuedAt = Date.now(); // the sandbox's clock
    process.stderr.write(`queued ${perUser * USERS} messages in ${((performance.now() - started) / 1000).toFixed(1)} s; sending at ${RATE}/s per number…\n`);
    const waiting = app.db.$client.prepare("SELECT count(*) FROM messages WHERE status IN ('queued', 'scheduled', 'pending')").pluck();
    while ((waiting.get() as number) > 0) await new Promise((resolve) => setTimeout(resolve, 500));

    const byNumber = new Map<string, RecordedRequest[]>();
    const { requests } = (await (await fetch(`${sandbox.url}/_sandbox/requests`)).json()) as { requests: RecordedRequest[] };
    for (const request of requests) {
      const match = /\/([0-9]+)\/messages$/.exec(request.path);
      if (match) byNumber.set(match[1]!, [...(byNumber.get(match[1]!) ?? []), request]);
    }
    let worst = 0;
    // The rate over the whole run, and over the part after every batch was queued (the batches' writes compete with
    // the sends before that): on a quiet machine both are within 2 % of the rate.
    const rateOf = (times: number[]) => (times.length < 2 ? NaN : ((times.length - 1) * 1000) / (times.at(-1)! - times[0]!));
    console.log('phone_number_id     sent   rate/s   rate/s once all queued   max in 1 s');
    for (const [id, requests] of [...byNumber].sort()) {
      const times = requests.map((r) => r.at).sort((a, b) => a - b);
      const max = maxWindow(times);
      worst = Math.max(worst, max);
      console.log(`${id.padEnd(18)} ${String(times.length).padStart(5)}   ${rateOf(times).toFixed(2).padStart(6)}   `
        + `${rateOf(times.filter((t) => t >= queuedAt)).toFixed(2).padStart(22)}   ${String(max).padStart(10)}`);
    }
    console.log(`rate ${RATE}/s: busiest 1 s window ${worst} (${worst <= RATE ? 'never above the rate' : 'ABOVE THE RATE'})`);
    process.exitCode = worst <= RATE ? 0 : 1;
  } finally {
    await app.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
