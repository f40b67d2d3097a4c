// End to end: the real process is SIGKILLed while sends are in flight at the network. After a restart no message
// stays pending: each is failed INTERRUPTED with its credit back, and a repeat with its Idempotency-Key answers 502
// MESSAGING_OUTCOME_UNKNOWN with the message id, never a second network call.
// The send budget is 2 × MESSAGING_TIMEOUT_MS + 60 s; rather than wait a minute, the test moves the interrupted sends
// (messages, keys and the credits they took) that far into the past in the database file while the process is down,
// so the restarted process's start-up pass is what settles them.
import Database from 'better-sqlite3';
import t from 'tap';
import { monthKey } from '../src/support/time';
import { ADMIN, CLIENT, crashGateway, PHONE_ID, RESTART_TIMEOUT_MS, SHIFT_MS, TOKEN } from './fixtures/crash-gateway';
import { run, SERVER_TS, waitForHealth } from './fixtures/process';

const SENDS = 3;

t.test('sends cut by SIGKILL are settled at the next start-up: failed INTERRUPTED, refunded, keys answer 502 with the id', async (t) => {
  const { databasePath, sandbox, base, env, json, login } = await crashGateway(t, 'info');
  const send = (cookie: { cookie: string }, i: number) => json('POST', '/api/message/send',
    { to: `1555123456${i}`, type: 'text', text: { body: `crash ${i}` } }, { ...cookie, 'idempotency-key': `key-${i}` });

  // First life: a client with 10 credits, three sends held at the network, then SIGKILL.
  const first = run(t, SERVER_TS, env(10_000));
  if (!t.ok(await waitForHealth(base, first.exited, Date.now() + 60_000), 'first start')) return t.comment(first.output());
  const admin = await login(ADMIN);
  const created = await json('POST', '/api/user/create', {
    ...CLIENT, messaging_token: TOKEN, messaging_phone_number_id: PHONE_ID, monthly_credits: 10,
  }, admin);
  t.equal(created.status, 201);
  const client = await login(CLIENT);
  sandbox.enqueue(...Array.from({ length: SENDS }, () => ({ kind: 'accept' as const, delayMs: 30_000 })));
  const inFlight = Array.from({ length: SENDS }, (_, i) => send(client, i).catch((error: unknown) => error));
  const deadline = Date.now() + 30_000;
  while (sandbox.requests.length < SENDS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(sandbox.requests.length, SENDS, 'every send reached the network');
  first.child.kill('SIGKILL');
  await first.exited;
  t.ok((await Promise.all(inFlight)).every((answer) => answer instanceof Error), 'no send was answered');

  // While it is down: what the crash left, then the same sends moved a whole budget into the past.
  const file = new Database(databasePath);
  const pending = file.prepare("SELECT id, created_at AS createdAt FROM messages WHERE status = 'pending' AND wamid IS NULL ORDER BY id").all() as { id: number; createdAt: number }[];
  t.equal(pending.length, SENDS, 'the crash left every send pending');
  const thisMonth = monthKey(new Date(pending[0]!.createdAt), 'UTC');
  t.same(file.prepare('SELECT month, used FROM credit_usage').all(), [{ month: thisMonth, used: SENDS }]);
  const earlierMonth = monthKey(new Date(pending[0]!.createdAt - SHIFT_MS), 'UTC');
  file.transaction(() => {
    file.prepare('UPDATE messages SET created_at = created_at - ? WHERE status = ?').run(SHIFT_MS, 'pending');
    file.prepare('UPDATE idempotency_keys SET created_at = created_at - ?').run(SHIFT_MS);
    // Moved across the first of a month, the credits they took move with them.
    file.prepare('UPDATE credit_usage SET month = ? WHERE month = ?').run(earlierMonth, thisMonth);
  })();
  file.close();

  // Second life, with a short timeout: the start-up pass settles them.
  const second = run(t, SERVER_TS, env(RESTART_TIMEOUT_MS));
  if (!t.ok(await waitForHealth(base, second.exited, Date.now() + 60_000), 'second start')) return t.comment(second.output());
  const clientAgain = await login(CLIENT);
  const readMessages = async () => {
    const res = await fetch(`${base}/api/user/2/conversations`, { headers: clientAgain });
    return (await res.json() as { messages: { id: number; status: string; error: { code: string } | null }[] }[]).flatMap((c) => c.messages);
  };
  let messages = await readMessages();
  const settleDeadline = Date.now() + 30_000;
  while (messages.some((m) => m.status === 'pending') && Date.now() < settleDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    messages = await readMessages();
  }
  t.same(messages.map((m) => [m.id, m.status, m.error?.code]).sort(), pending.map((p) => [p.id, 'failed', 'INTERRUPTED']));
  const check = new Database(databasePath, { readonly: true });
  t.same(check.prepare('SELECT month, used FROM credit_usage').all(), [{ month: earlierMonth, used: 0 }], 'every credit back');
  check.close();
  if (earlierMonth === thisMonth) {
    t.match(await (await fetch(`${base}/api/me`, { headers: clientAgain })).json(), { credits_used: 0, credits_remaining: 10 });
  }

  for (let i = 0; i < SENDS; i++) {
    const repeat = await send(clientAgain, i);
    t.equal(repeat.status, 502);
    t.match(await repeat.json(), { statusCode: 502, code: 'MESSAGING_OUTCOME_UNKNOWN', id: pending[i]!.id });
  }
  t.equal(sandbox.requests.length, SENDS, 'no repeat reached the network');
  const settledLog = second.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === 'interrupted sends marked failed (INTERRUPTED) and their credits refunded');
  t.match(settledLog, [{ messages: SENDS }], 'settled by the start-up pass, and logged');

  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
