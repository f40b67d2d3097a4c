// `npm run admin` from the shell against the database a running gateway uses: reset-password ends sessions,
// create-admin with a printed or piped password, and clear errors with a non-zero exit.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createUser, PASSWORD, tempDir } from './helper';
import { runCli } from './fixtures/cli';

const login = (app: App, email: string, password: string) =>
  app.inject({ method: 'POST', url: '/api/login', payload: { email, password } });
const shownPassword = (stdout: string) => /\(shown once\): (\S+)\n$/.exec(stdout)?.[1];

t.test('reset-password: a new random password, printed once; the old one and the old sessions stop working', async (t) => {
  const { app, config } = await buildTestApp(t);
  const ana = await createUser(app, { email: 'ana@example.com' });
  const oldSession = bearer(app, ana);
  t.equal((await app.inject({ method: 'GET', url: '/api/me', headers: oldSession })).statusCode, 200);

  const run = await runCli('admin', ['reset-password', 'Ana@Example.com'], { DATABASE_PATH: config.databasePath });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stderr, '');
  const password = shownPassword(run.stdout);
  t.match(run.stdout, /^Password of ana@example\.com reset; all of its sessions have ended\.\n/);
  t.ok(password && password.length >= 16, 'a long random password');

  t.equal((await login(app, 'ana@example.com', PASSWORD)).statusCode, 401, 'the old password fails');
  t.equal((await login(app, 'ana@example.com', password!)).statusCode, 200, 'the new one works');
  const me = await app.inject({ method: 'GET', url: '/api/me', headers: oldSession });
  t.equal(me.statusCode, 401, 'a JWT issued before the reset is refused');
  // Recorded in the audit log as coming from the shell (no actor, no address), without the password.
  t.same(app.db.$client.prepare('SELECT actor_user_id AS actor, action, target_user_id AS target, target_email AS email, details_json AS details, client_ip AS ip FROM audit_log').all(),
    [{ actor: null, action: 'user.password_reset', target: ana.id, email: 'ana@example.com', details: '{"via":"admin command","sessions_ended":true}', ip: null }]);
});

t.test('create-admin: the piped password, never printed; an ADMIN that can log in', async (t) => {
  const { app, config } = await buildTestApp(t);
  const env = { DATABASE_PATH: config.databasePath };
  const run = await runCli('admin', ['create-admin', 'Root@Example.com'], env, 'piped secret password\n');
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'Administrator root@example.com created with the password read from standard input\n');
  const res = await login(app, 'root@example.com', 'piped secret password');
  t.equal(res.statusCode, 200);
  t.match(app.usersRepo.findByEmail('root@example.com'), { role: 'ADMIN', isActive: true });

  const again = await runCli('admin', ['create-admin', 'root@example.com'], env, 'another password\n');
  t.equal(again.code, 1);
  t.equal(again.stderr, 'Error: A user with the e-mail root@example.com already exists (reset its password with reset-password)\n');
  t.equal((await login(app, 'root@example.com', 'piped secret password')).statusCode, 200, 'the existing admin is untouched');
});

t.test('create-admin with a passwd-style pipe: only the first line is the password', async (t) => {
  const { app, config } = await buildTestApp(t);
  const run = await runCli('admin', ['create-admin', 'twice@example.com'], { DATABASE_PATH: config.databasePath }, 'first line secret\r\nfirst line secret\n');
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'Administrator twice@example.com created with the password read from standard input\n');
  t.equal((await login(app, 'twice@example.com', 'first line secret')).statusCode, 200);
  t.equal((await login(app, 'twice@example.com', 'first line secret\r\nfirst line secret')).statusCode, 401);
});

t.test('create-admin with nothing piped: a random password printed once', async (t) => {
  const { app, config } = await buildTestApp(t);
  const run = await runCli('admin', ['create-admin', 'ops@example.com'], { DATABASE_PATH: config.databasePath });
  t.equal(run.code, 0, run.stderr);
  const password = shownPassword(run.stdout);
  t.match(run.stdout, /^Administrator ops@example\.com created\nPassword \(shown once\): /);
  t.equal((await login(app, 'ops@example.com', password!)).statusCode, 200);
});

t.test('errors: a clear message and a non-zero exit, nothing changed', async (t) => {
  const { app, config } = await buildTestApp(t);
  const env = { DATABASE_PATH: config.databasePath };
  const cases: [string[], string | undefined, number, RegExp][] = [
    [['reset-password', 'nobody@example.com'], undefined, 1, /^Error: No user has the e-mail nobody@example\.com\n$/],
    [['create-admin', 'not-an-email'], 'long enough password', 1, /^Error: "not-an-email" is not a valid e-mail address\n$/],
    [['reset-password', 'a b@example.com'], undefined, 1, /is not a valid e-mail address/],
    [['create-admin', 'short@example.com'], 'short\n', 1, /^Error: The password read from standard input must be 8 to 256 characters long\n$/],
    [['create-admin', 'long@example.com'], 'x'.repeat(257), 1, /must be 8 to 256 characters long/],
    [['create-admin', 'tab@example.com'], 'with\ta tab inside\n', 1,
      /^Error: The password read from standard input contains a control character \(a tab, an escape …\); choose one without\n$/],
    [['create-admin', 'esc@example.com'], 'escape \u001b[31m red\n', 1, /contains a control character/],
    [['delete-everything', 'x@example.com'], undefined, 2, /^Error: Unknown command "delete-everything"\nUsage: npm run admin/],
    [['create-admin'], undefined, 2, /^Error: create-admin takes exactly one EMAIL\n/],
    [[], undefined, 2, /^Error: Unknown command ""/],
  ];
  for (const [args, input, code, stderr] of cases) {
    const run = await runCli('admin', args, env, input);
    t.equal(run.code, code, args.join(' '));
    t.match(run.stderr, stderr, args.join(' '));
    t.equal(run.stdout, '', 'no password printed');
  }
  t.equal(app.usersRepo.list(10, 0).total, 0, 'no user was created');

  const dir = tempDir(t);
  const missing = join(dir, 'nothing-here.db');
  const run = await runCli('admin', ['create-admin', 'x@example.com'], { DATABASE_PATH: missing });
  t.equal(run.code, 1);
  t.match(run.stderr, /^Error: No database at .*nothing-here\.db: check DATABASE_PATH/);
  t.notOk(existsSync(missing), 'no empty database was created');
  const bad = await runCli('admin', ['create-admin', 'x@example.com'], { DATABASE_PATH: config.databasePath, PORT: 'abc' });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^Error: Configuration error: Invalid PORT/);
});
