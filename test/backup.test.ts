// `npm run backup` while the gateway runs and takes writes: a consistent, checked, private copy plus the key files;
// a restore (the copy and the keys in another folder) starts and serves the data, sessions and tokens included.
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { bearer, buildTestApp, createAdmin, createUser, tempDir } from './helper';
import { runCli } from './fixtures/cli';
import { deliver, envelope, messageCount, textItem } from './fixtures/webhooks';

const SECRET = 'backup-secret';
const PHONE = '900000000000001';
const NOW = Date.UTC(2026, 0, 1);

t.test('a backup taken while callbacks are written is consistent; a restore elsewhere serves it', async (t) => {
  const { app, config, dir } = await buildTestApp(t, { jwtSecret: undefined, messagingAppSecret: SECRET });
  const admin = await createAdmin(app);
  const owner = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE, messagingToken: 'network-token-123' });
  // Enough pages that the copy takes several steps of the event loop.
  app.writer.writeNow(() => {
    for (let i = 0; i < 20_000; i++) {
      app.messagesRepo.insertInbound({ userId: owner.id, contactWaId: `1555${i % 300}`, contactName: null, wamid: `wamid.seed.${i}`,
        type: 'text', text: `seeded ${i} ${'x'.repeat(100)}`, payloadJson: '{}', createdAt: NOW + i });
    }
  });
  const session = bearer(app, admin);

  const out = tempDir(t, 'gateway-backup-');
  const file = join(out, 'copy.db');
  let running = true;
  let delivered = 0;
  const writes = (async () => {
    for (let i = 0; running; i++) {
      const res = await deliver(app, envelope(PHONE, { messages: [textItem(`wamid.live.${i}`, '15559990000', NOW / 1000 + i, 'live')] }), SECRET);
      if (res.statusCode === 200) delivered += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  const run = await runCli('backup', ['copy.db'], { DATABASE_PATH: config.databasePath, INIT_CWD: out });
  running = false;
  await writes;
  t.equal(run.code, 0, run.stderr);
  t.ok(delivered > 0, `${delivered} callbacks stored while the backup ran`);

  const size = statSync(file).size;
  t.equal(run.stdout, [
    `Backup written to ${file} (${size} bytes, integrity ok).`,
    `Key file copied: ${file}.token-key (restore it as token-key beside the database).`,
    `Key file copied: ${file}.jwt-secret (restore it as jwt-secret beside the database).`,
    '',
  ].join('\n'));
  for (const path of [file, `${file}.token-key`, `${file}.jwt-secret`]) t.equal(statSync(path).mode & 0o777, 0o600, `${path} is 0600`);
  t.equal(readFileSync(`${file}.token-key`, 'utf8'), readFileSync(join(dir, 'token-key'), 'utf8'));
  t.equal(readFileSync(`${file}.jwt-secret`, 'utf8'), readFileSync(join(dir, 'jwt-secret'), 'utf8'));
  t.same(readdirSync(out).sort(), ['copy.db', 'copy.db.jwt-secret', 'copy.db.token-key'], 'one file, no -wal, no leftovers');

  const copy = new Database(file, { readonly: true });
  t.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  t.same(copy.pragma('foreign_key_check'), []);
  const copied = copy.prepare('SELECT count(*) FROM messages').pluck().get() as number;
  const liveIds = copy.prepare("SELECT count(*) FROM messages WHERE wamid LIKE 'wamid.live.%'").pluck().get() as number;
  // Each callback is one transaction: the copy holds whole ones, a prefix of what was written.
  t.equal(copied, 20_000 + liveIds);
  t.ok(liveIds <= delivered);
  t.equal(copy.prepare("SELECT count(*) FROM webhook_events WHERE state = 'processed'").pluck().get(), liveIds, 'every copied callback with its facts');
  copy.close();

  // Restore: stop, put the copy (and its keys) at DATABASE_PATH, start.
  const restoredDir = tempDir(t, 'gateway-restored-');
  copyFileSync(file, join(restoredDir, 'gateway.db'));
  copyFileSync(`${file}.token-key`, join(restoredDir, 'token-key'));
  copyFileSync(`${file}.jwt-secret`, join(restoredDir, 'jwt-secret'));
  const restored = await buildTestApp(t, { databasePath: join(restoredDir, 'gateway.db'), jwtSecret: undefined });
  t.equal(messageCount(restored.app), copied);
  const me = await restored.app.inject({ method: 'GET', url: '/api/me', headers: session });
  t.equal(me.statusCode, 200, 'a session of the original still works: the JWT key came along');
  const user = restored.app.usersRepo.findById(owner.id)!;
  t.equal(restored.app.openMessagingToken(user.messagingToken!, user.id), 'network-token-123', 'the messaging token opens: the token key came along');
  const listed = await restored.app.inject({ method: 'GET', url: `/api/user/${owner.id}/conversations`, headers: session });
  t.equal(listed.statusCode, 200);
  t.match(JSON.stringify(listed.json()), /seeded 19999/);
});

t.test('an existing FILE is kept unless --force; bad command lines and a missing database fail clearly', async (t) => {
  const { config } = await buildTestApp(t);
  const out = tempDir(t, 'gateway-backup-');
  const file = join(out, 'copy.db');
  const env = { DATABASE_PATH: config.databasePath, INIT_CWD: out };
  t.equal((await runCli('backup', [file], env)).code, 0);
  const first = readFileSync(file);

  const again = await runCli('backup', [file], env);
  t.equal(again.code, 1);
  t.equal(again.stderr, `Error: ${file} exists: choose another name or add --force\n`);
  t.same(readFileSync(file), first, 'left as it was');
  // The test app was given its JWT key: only the token key is beside the database.
  t.same(readdirSync(out).sort(), ['copy.db', 'copy.db.token-key'], 'no partial file left');

  const forced = await runCli('backup', [file, '--force'], { ...env, JWT_SECRET: 'an-operator-secret-an-operator-secret-123' });
  t.equal(forced.code, 0, forced.stderr);
  t.match(forced.stdout, /\nJWT_SECRET is set in the environment: sessions survive a restore only with the same value\.\n$/);
  t.equal(statSync(file).mode & 0o777, 0o600);

  const usage = await runCli('backup', [], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /^Error: Give exactly one FILE to write the backup to\nUsage: npm run backup -- FILE \[--force\]/);
  t.equal((await runCli('backup', [file, '--overwrite'], env)).code, 2);
  const self = await runCli('backup', [config.databasePath, '--force'], env);
  t.equal(self.code, 1);
  t.match(self.stderr, /is the live database itself/);
  const nowhere = await runCli('backup', [join(out, 'no-such-folder', 'x.db')], env);
  t.equal(nowhere.code, 1);
  t.match(nowhere.stderr, /^Error: The folder .*no-such-folder does not exist\n$/);

  const missing = join(out, 'missing.db');
  const none = await runCli('backup', [join(out, 'x.db')], { DATABASE_PATH: missing });
  t.equal(none.code, 1);
  t.match(none.stderr, /^Error: No database at .*missing\.db/);
  t.notOk(existsSync(missing));
  t.notOk(existsSync(join(out, 'x.db')));
});
