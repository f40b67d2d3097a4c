// End to end: SIGTERM or SIGINT to the whole process group of `npm start` (npm and node, as systemd and Ctrl-C do) lets
// sends in flight get their answers, refuses new connections, and exits 0 — also when the signal comes twice. A request
// that never finishes is cut after the 10 s grace period (still exit 0); a shutdown that hangs ends at the 15 s backstop
// (exit 1).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { projectRoot } from '../src/config';
import { startSandbox } from '../src/sandbox/server';
import { freePort } from './fixtures/process';
import { tempDir } from './helper';

const ADMIN = { email: 'root@example.com', password: 'e2e-admin-password' };
const CLIENT = { email: 'ana@example.com', password: 'client-password' };
const TOKEN = 'EAAsandbox-shutdown-token-0123456789';
const PHONE_ID = '106540352242922';
/** The network holds each send this long: the signal arrives while all of them wait for it. */
const NETWORK_DELAY_MS = 3000;
const SENDS = 3;

// Five real processes, two of which wait out the 10 s grace period or the 15 s backstop: more than the suite's 120 s.
t.setTimeout(300_000);

/** GET on a new TCP connection (no keep-alive pool): the status, or the connection error's code. */
function freshGet(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'ERROR'));
    req.end();
  });
}

async function json(base: string, path: string, body: unknown, cookie?: string) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
  });
  return { status: res.status, body: await res.json() as Record<string, unknown>, cookie: (res.headers.getSetCookie()[0] ?? '').split(';')[0]! };
}

/** `npm start` in its own process group on the sandbox, with an admin and a client who sends; extra env on top. */
async function boot(t: Test, env: Record<string, string> = {}) {
  const sandbox = await startSandbox({ enabled: false });
  t.teardown(() => sandbox.close());
  sandbox.addAccount({ phoneNumberId: PHONE_ID, token: TOKEN });
  const dir = tempDir(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // detached: npm leads its own process group, as under systemd or a terminal.
  const child = spawn('npm', ['run', '--silent', 'start'], {
    cwd: projectRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'gateway.db'), LOG_LEVEL: 'info',
      ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, MESSAGING_API_URL: `${sandbox.url}/v23.0`, MESSAGING_TIMEOUT_MS: '20000',
      ...env,
    },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null }));
  let gone = false;
  void exited.then(() => { gone = true; });
  t.teardown(() => { if (!gone) process.kill(-child.pid!, 'SIGKILL'); });

  let up = false;
  for (const deadline = Date.now() + 60_000; !up && !gone && Date.now() < deadline; await sleep(250)) up = (await freshGet(`${base}/healthz`)) === 200;
  if (!t.ok(up, 'the gateway answers')) {
    t.comment(output);
    return undefined;
  }
  const admin = await json(base, '/api/login', ADMIN);
  const created = await json(base, '/api/user/create', {
    ...CLIENT, messaging_token: TOKEN, messaging_phone_number_id: PHONE_ID, monthly_credits: 10,
  }, admin.cookie);
  t.equal(created.status, 201, 'client created by the admin');
  const client = await json(base, '/api/login', CLIENT);
  t.equal(client.status, 200);
  const send = (i: number) => json(base, '/api/message/send', { to: '15551234567', type: 'text', text: { body: `in flight ${i}` } }, client.cookie)
    .catch((error: Error) => ({ status: 0, body: { error: error.message }, cookie: '' }));
  /** The signal to npm and node together, as Ctrl-C (SIGINT) or systemctl stop (SIGTERM) send it. */
  const signal = (name: NodeJS.Signals) => process.kill(-child.pid!, name);
  return { sandbox, base, exited, output: () => output, send, signal };
}

async function shutdownRun(t: Test, signal: NodeJS.Signals, signals: number): Promise<void> {
  const gateway = await boot(t);
  if (!gateway) return;
  const { sandbox, base, exited, output, send } = gateway;

  sandbox.enqueue(...Array.from({ length: SENDS }, () => ({ kind: 'accept' as const, delayMs: NETWORK_DELAY_MS })));
  let answered = 0;
  const sends = Array.from({ length: SENDS }, (_, i) => send(i).then((res) => { answered += 1; return res; }));
  while (sandbox.requests.length < SENDS) await sleep(20);
  t.equal(answered, 0, 'every send is waiting for the network');

  gateway.signal(signal);
  if (signals > 1) {
    await sleep(100);
    gateway.signal(signal);
  }

  // New connections are refused while the sends in flight are still running.
  let refused: number | string = 0;
  let answeredWhenRefused = -1;
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(50)) {
    refused = await freshGet(`${base}/healthz`);
    if (refused === 'ECONNREFUSED') { answeredWhenRefused = answered; break; }
  }
  t.equal(refused, 'ECONNREFUSED', 'a new connection is refused after the signal');
  t.equal(answeredWhenRefused, 0, 'refused while the sends were still in flight');

  const results = await Promise.all(sends);
  for (const res of results) {
    t.equal(res.status, 201, 'the send in flight got its answer');
    t.match(res.body, { status: 'accepted', wamid: /^wamid\./ });
  }
  t.same(await exited, { code: 0, signal: null }, 'npm (and node under it) exit 0');
  t.match(output(), new RegExp(`"signal":"${signal}","msg":"closing"`));
  if (signals > 1) t.match(output(), new RegExp(`"signal":"${signal}","msg":"already closing: requests in flight are finishing"`), 'the repeat is logged and ignored');
  t.notMatch(output(), /still running after the grace period|exiting|killed by timeout/, 'no connection cut, no forced exit');
}

t.test('SIGTERM to the process group: sends in flight answered, new connections refused, exit 0', (t) => shutdownRun(t, 'SIGTERM', 1));
t.test('SIGTERM twice to the process group: the repeat does not cut the grace period short', (t) => shutdownRun(t, 'SIGTERM', 2));
t.test('SIGINT (Ctrl-C) to the process group: sends in flight answered, new connections refused, exit 0', (t) => shutdownRun(t, 'SIGINT', 1));

t.test('a request that never finishes is cut at the end of the grace period, and the process still exits 0', async (t) => {
  // The request deadline is far beyond the grace period: only the shutdown ends this request.
  const gateway = await boot(t, { REQUEST_TIMEOUT_MS: '600000' });
  if (!gateway) return;
  const { base, exited, output } = gateway;
  // A callback whose body never ends: its headers and a part of the body, then nothing.
  const socket = connect(Number(new URL(base).port), '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString(); });
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  socket.write('POST /api/messaging/webhook HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\n'
    + 'x-request-id: never-finishes\r\ncontent-length: 1000\r\n\r\n{"object":');
  while (!output().includes('"reqId":"never-finishes"')) await sleep(20);

  gateway.signal('SIGTERM');
  await closed;
  t.equal(answer, '', 'its connection was closed without an answer');
  t.same(await exited, { code: 0, signal: null }, 'exit 0: the request had its grace period');
  t.match(output(), /"graceMs":10000,"msg":"requests still running after the grace period: closing their connections"/);
  t.notMatch(output(), /killed by timeout/, 'closing itself did not hang');
});

t.test('closing that hangs (a send the network never answers keeps its connection pool open) ends with exit 1 at the backstop', async (t) => {
  // The network holds the send far longer than the 10 s grace and the 15 s backstop, and the send waits for it.
  const gateway = await boot(t, { MESSAGING_TIMEOUT_MS: '60000' });
  if (!gateway) return;
  const { sandbox, exited, output, send } = gateway;
  sandbox.enqueue({ kind: 'accept', delayMs: 120_000 });
  const held = send(0);
  while (sandbox.requests.length < 1) await sleep(20);

  gateway.signal('SIGTERM');
  t.equal((await held).status, 0, 'the held send\'s connection was cut at the grace period');
  t.same(await exited, { code: 1, signal: null }, 'exit 1: the backstop ended a shutdown that could not finish');
  t.match(output(), /requests still running after the grace period/);
  t.match(output(), /killed by timeout \(15000ms\)/);
});
