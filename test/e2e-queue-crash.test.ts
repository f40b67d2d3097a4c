// End to end: the real process is SIGKILLed with hundreds of messages queued, some of them at the network. After a
// restart the queue resumes: every message is sent exactly once at the network (or, if it was under way at the kill,
// at most once and settled INTERRUPTED with its credit back, never re-sent blindly), none is lost, and the credits used
// are exactly the accepted messages. Interrupted sends are settled a send budget after they were stored; the test moves
// them that far into the past in the database file while the process is down, as test/e2e-crash.test.ts does.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { monthKey } from '../src/support/time';
import { PHONE_ID, testSandbox, TOKEN } from './fixtures/sending';
import { freePort, run, SERVER_TS, waitForHealth } from './fixtures/process';
import { tempDir } from './helper';

const ADMIN = { email: 'root@example.com', password: 'e2e-admin-password' };
const CLIENT = { email: 'ana@example.com', password: 'e2e-client-password' };
const QUEUED = 300;
// Generous (as test/fixtures/sending.ts TIMEOUT_MS): on a loaded machine the sandbox in this process answers late, and a
// send without an answer in time fails (MESSAGING_UNAVAILABLE) instead of being sent.
const RESTART_TIMEOUT_MS = 2000;
const SHIFT_MS = 2 * RESTART_TIMEOUT_MS + 60_000 + 2_000;

t.test('SIGKILL with hundreds queued, then a restart: each sent once, none lost, credits exact', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  const sandbox = await testSandbox(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = (timeoutMs: number) => ({
    PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: databasePath, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password,
    MESSAGING_API_URL: `${sandbox.url}/v23.0`, MESSAGING_TIMEOUT_MS: String(timeoutMs), LOG_LEVEL: 'warn',
  });
  const json = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const login = async (who: typeof ADMIN) => ({ cookie: (await json('POST', '/api/login', who)).headers.getSetCookie()[0]!.split(';')[0]! });
  const sentBodies = () => sandbox.requests.filter((r) => r.path.endsWith('/messages')).map((r) => JSON.parse(r.body).text.body as string);

  const first = run(t, SERVER_TS, env(10_000));
  if (!t.ok(await waitForHealth(base, first.exited, Date.now() + 60_000), 'first start')) return t.comment(first.output());
  const admin = await login(ADMIN);
  const created = await json('POST', '/api/user/create', {
    ...CLIENT, messaging_token: TOKEN, messaging_phone_number_id: PHONE_ID, monthly_credits: 1000, messaging_rate: 100,
  }, admin);
  t.equal(created.status, 201);
  const client = await login(CLIENT);
  // The 81st to 85th sends are held at the network: under way when the process dies.
  sandbox.enqueue(...Array.from({ length: 80 }, () => ({ kind: 'accept' as const })), ...Array.from({ length: 5 }, () => ({ kind: 'accept' as const, delayMs: 30_000 })));
  const batch = await json('POST', '/api/message/batch', {
    messages: Array.from({ length: QUEUED }, (_, i) => ({ to: '15551234567', type: 'text', text: { body: `q${i}` } })),
  }, client);
  t.equal(batch.status, 202);
  const deadline = Date.now() + 30_000;
  while (sentBodies().length < 120 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  first.child.kill('SIGKILL');
  await first.exited;
  const beforeRestart = sentBodies().length;
  t.ok(beforeRestart >= 120 && beforeRestart < QUEUED, `killed half way (${beforeRestart} at the network)`);

  const file = new Database(databasePath);
  const counts = Object.fromEntries((file.prepare('SELECT status, count(*) AS n FROM messages GROUP BY status').all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
  t.ok((counts.queued ?? 0) > 0 && (counts.pending ?? 0) >= 5, `queued and claimed rows left by the crash: ${JSON.stringify(counts)}`);
  const thisMonth = monthKey(new Date(), 'UTC');
  const shiftedMonth = monthKey(new Date(Date.now() - SHIFT_MS), 'UTC');
  if (thisMonth !== shiftedMonth) return t.comment('skipped: the shifted sends would cross the first of a month');
  file.prepare("UPDATE messages SET created_at = created_at - ? WHERE status = 'pending'").run(SHIFT_MS);
  file.close();

  const second = run(t, SERVER_TS, env(RESTART_TIMEOUT_MS));
  if (!t.ok(await waitForHealth(base, second.exited, Date.now() + 60_000), 'second start')) return t.comment(second.output());
  const check = new Database(databasePath, { readonly: true });
  const waiting = () => (check.prepare("SELECT count(*) FROM messages WHERE status IN ('queued', 'scheduled', 'pending')").pluck().get() as number);
  const settleDeadline = Date.now() + 60_000;
  while (waiting() > 0 && Date.now() < settleDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(waiting(), 0, 'nothing left waiting or pending');

  const rows = check.prepare('SELECT text, status, error_json AS errorJson FROM messages ORDER BY id').all() as { text: string; status: string; errorJson: string | null }[];
  t.equal(rows.length, QUEUED, 'none lost');
  const times = new Map<string, number>();
  for (const body of sentBodies()) times.set(body, (times.get(body) ?? 0) + 1);
  const accepted = rows.filter((r) => r.status === 'accepted');
  const interrupted = rows.filter((r) => r.status === 'failed');
  t.equal(accepted.length + interrupted.length, QUEUED);
  t.ok(accepted.every((r) => times.get(r.text) === 1), 'each accepted message reached the network exactly once');
  t.ok(interrupted.every((r) => JSON.parse(r.errorJson!).code === 'INTERRUPTED' && (times.get(r.text) ?? 0) <= 1), 'the ones under way at the kill: settled INTERRUPTED, never sent again');
  t.ok(interrupted.length >= 5 && interrupted.length <= 64, `only sends under way were interrupted (${interrupted.length})`);
  t.same(check.prepare('SELECT used FROM credit_usage').pluck().all(), [accepted.length], 'credits used = messages accepted');
  check.close();
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
