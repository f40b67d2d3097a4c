// `npm run backup` while the gateway runs and takes writes: a consistent, checked, private copy plus the key files;
// a restore (the copy and the keys in another folder) starts and serves the data, sessions and tokens included.
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { bearer, buildTestApp, createAdmin, createUser, tempDir } from './helper';
import { runCli } from './fixtures/cli';
import { deliver, envelope, messageCount, textItem } from './fixtures/webhooks';
import { downloadState, eventually, mediaApp } from './fixtures/stored-media';

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

t.test('backup to a DIR holds the database, the keys and exactly the media it lists; a restore serves them, a lost file is downloaded again', async (t) => {
  const live = tempDir(t, 'gateway-live-');
  const source = await mediaApp(t, { databasePath: join(live, 'gateway.db'), jwtSecret: undefined });
  const ids = await source.receive(3);
  // Not listed as stored by the database: a partial download and a file nobody lists are never copied.
  writeFileSync(join(live, 'gateway.media', '999999'), 'orphan');
  writeFileSync(join(live, 'gateway.media', `${ids[0]}.part`), 'partial');

  const out = tempDir(t, 'gateway-backup-');
  const run = await runCli('backup', ['snap/'], { DATABASE_PATH: join(live, 'gateway.db'), INIT_CWD: out });
  t.equal(run.code, 0, run.stderr);
  const dir = join(out, 'snap');
  const size = statSync(join(dir, 'gateway.db')).size;
  const bytes = source.images.reduce((n, image) => n + image.length, 0);
  t.equal(run.stdout, [
    `Backup written to ${dir}/gateway.db (${size} bytes, integrity ok).`,
    `Key file copied: ${dir}/token-key.`,
    `Key file copied: ${dir}/jwt-secret.`,
    `Media files copied: 3 (${bytes} bytes) to ${dir}/gateway.media/, exactly those the copy lists as stored.`,
    `Restore: stop the gateway, copy everything in ${dir} into the folder of DATABASE_PATH (as gateway.db), start.`,
    '',
  ].join('\n'));
  t.same(readdirSync(dir).sort(), ['gateway.db', 'gateway.media', 'jwt-secret', 'token-key'], 'no -wal, no staging folder left');
  t.same(readdirSync(join(dir, 'gateway.media')).sort(), ids.map(String).sort());
  t.equal(statSync(dir).mode & 0o777, 0o700);
  t.equal(statSync(join(dir, 'gateway.media')).mode & 0o777, 0o700);
  for (const file of ['gateway.db', 'jwt-secret', 'token-key', ...ids.map((id) => `gateway.media/${id}`)]) {
    t.equal(statSync(join(dir, file)).mode & 0o777, 0o600, `${file} is 0600`);
  }
  t.equal(readFileSync(join(dir, 'jwt-secret'), 'utf8'), readFileSync(join(live, 'jwt-secret'), 'utf8'));

  const again = await runCli('backup', ['snap'], { DATABASE_PATH: join(live, 'gateway.db'), INIT_CWD: out });
  t.equal(again.code, 1, 'an existing folder is a DIR too; its backup is kept unless --force');
  t.equal(again.stderr, `Error: ${dir}/gateway.db exists: choose another folder or add --force\n`);

  // Restore into a new folder: every file served, the old session valid (the keys came along).
  const restoredDir = tempDir(t, 'gateway-restored-');
  cpSync(dir, restoredDir, { recursive: true });
  const restored = await buildTestApp(t, { databasePath: join(restoredDir, 'gateway.db'), jwtSecret: undefined });
  for (const [i, id] of ids.entries()) {
    const served = await restored.app.inject({ method: 'GET', url: `/api/media/${id}`, headers: source.auth });
    t.equal(served.statusCode, 200);
    t.same(served.rawPayload, source.images[i]);
  }

  // A restore that lost a file: at start-up its message goes back to the download queue and is listed stored: false.
  const lossyDir = tempDir(t, 'gateway-lossy-');
  cpSync(dir, lossyDir, { recursive: true });
  rmSync(join(lossyDir, 'gateway.media', String(ids[1])));
  const lossy = await buildTestApp(t, { databasePath: join(lossyDir, 'gateway.db'), jwtSecret: undefined, messagingApiUrl: source.app.config.messagingApiUrl });
  t.same(ids.map((id) => downloadState(lossy.app, id)), ['stored', 'pending', 'stored']);
  const listed = await lossy.app.inject({ method: 'GET', url: `/api/user/${source.user.id}/conversations`, headers: source.auth });
  const media = Object.fromEntries(listed.json()[0].messages.map((m: { id: number; media: unknown }) => [m.id, m.media]));
  t.match(media[ids[0]!], { stored: true, url: `/api/media/${ids[0]}`, error: null });
  t.match(media[ids[1]!], { stored: false, url: null, error: null });
  const gone = await lossy.app.inject({ method: 'GET', url: `/api/media/${ids[1]}`, headers: source.auth });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'MEDIA_NOT_STORED');
  t.match(lossy.logs(), /"count":1,.*"msg":"Media files on record are missing from the archive folder: they are downloaded again"/);
  // Listening, its download worker fetches the file again from the network, which still has it.
  await lossy.app.listen({ host: '127.0.0.1', port: 0 });
  await eventually('downloaded again', () => downloadState(lossy.app, ids[1]!) === 'stored');
  const back = await lossy.app.inject({ method: 'GET', url: `/api/media/${ids[1]}`, headers: source.auth });
  t.equal(back.statusCode, 200);
  t.same(back.rawPayload, source.images[1]);
});
