// End to end: `npm start` as an operator runs it, over real HTTP, then SIGTERM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { freePort, run, waitForHealth } from './fixtures/process';
import { tempDir } from './helper';

const ADMIN = { email: 'root@example.com', password: 'e2e-admin-password' };

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

  // The server is the node process below npm (its shell execs node): it runs with the heap limit and two malloc arenas.
  const server = descendants(child.pid!).map((pid) => ({ pid, argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') }))
    .find(({ argv }) => argv.includes('dist/src/server.js'));
  if (!server) return t.fail('npm start runs node dist/src/server.js');
  t.ok(server.argv.includes('--max-old-space-size=1024'), `node runs with a 1,024 MB heap limit: ${server.argv.join(' ')}`);
  t.ok(readFileSync(`/proc/${server.pid}/environ`, 'utf8').split('\0').includes('MALLOC_ARENA_MAX=2'), 'and MALLOC_ARENA_MAX=2');

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

/** Every process below `pid`, children first (Linux: /proc/<pid>/task/<tid>/children). */
function descendants(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

// The build `npm start` just made is reused: a second build would double this file's time.
t.test('an invalid environment value stops start-up with a message naming it', async (t) => {
  const dir = tempDir(t);
  const { output, exited } = run(t, ['node', 'dist/src/server.js'], { PORT: 'abc', DATABASE_PATH: join(dir, 'gateway.db') });
  const code = await exited;
  t.not(code, 0, `exit code ${code}`);
  t.match(output(), /Configuration error: Invalid PORT: .*"abc"/);
});
