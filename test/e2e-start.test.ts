// End to end: `npm start` as an operator runs it, over real HTTP, then SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/config';
import { tempDir } from './helper';

const ADMIN = { email: 'root@example.com', password: 'e2e-admin-password' };

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** Runs `command` with `env` on top of ours; output collected, killed at the end of the test whatever happens. */
function run(t: Tap, command: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(command[0]!, command.slice(1), { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  return { child, output: () => output, exited };
}
type Tap = { teardown(fn: () => unknown): void };

async function waitForHealth(base: string, exited: Promise<unknown>, deadlineMs: number): Promise<boolean> {
  let gone = false;
  void exited.then(() => { gone = true; });
  while (Date.now() < deadlineMs && !gone) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

t.test('npm start serves, logs in with a cookie, and stops cleanly on SIGTERM', async (t) => {
  const dir = tempDir(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { child, output, exited } = run(t, ['npm', 'start'], {
    PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'gateway.db'),
    ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'info',
  });
  const up = await waitForHealth(base, exited, Date.now() + 60_000);
  if (!t.ok(up, 'GET /healthz answers')) return t.comment(output());

  const login = await fetch(`${base}/api/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN),
  });
  t.equal(login.status, 200);
  t.same(await login.json(), { message: 'Login success' });
  const cookie = login.headers.getSetCookie()[0] ?? '';
  t.match(cookie, /^token=[\w.-]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);

  const me = await fetch(`${base}/api/me`, { headers: { cookie: cookie.split(';')[0]! } });
  t.equal(me.status, 200);
  t.match(await me.json(), { id: 1, email: ADMIN.email, role: 'ADMIN', is_active: true });

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit code 0 after SIGTERM');
  t.match(output(), /"signal":"SIGTERM","msg":"closing"/);
  t.notOk(output().includes(ADMIN.password), 'the admin password is not logged');
  t.notOk(output().includes(cookie.split(';')[0]!.slice('token='.length)), 'the JWT is not logged');
});

// The build `npm start` just made is reused: a second build would double this file's time.
t.test('an invalid environment value stops start-up with a message naming it', async (t) => {
  const dir = tempDir(t);
  const { output, exited } = run(t, ['node', 'dist/src/server.js'], { PORT: 'abc', DATABASE_PATH: join(dir, 'gateway.db') });
  const code = await exited;
  t.not(code, 0, `exit code ${code}`);
  t.match(output(), /Configuration error: Invalid PORT: .*"abc"/);
});
