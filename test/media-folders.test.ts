// One database, one set of files: the archive is a folder of the database's own (`gateway.db` → `gateway.media/`), two
// databases in one folder never read or delete each other's files, and an install on the old shared `media/` keeps them.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { mediaDirOf } from '../src/db/media-files';
import { bearer, buildTestApp, tempDir } from './helper';
import { downloadState, mediaApp } from './fixtures/stored-media';

t.test('the archive folder is named after the database file', async (t) => {
  t.equal(mediaDirOf('/srv/gw/data/gateway.db'), '/srv/gw/data/gateway.media');
  t.equal(mediaDirOf('/srv/gw/data/demo.sqlite3'), '/srv/gw/data/demo.media');
  t.equal(mediaDirOf('/srv/gw/data/store'), '/srv/gw/data/store.media');
  t.equal(mediaDirOf('/srv/gw/data/odd.media'), '/srv/gw/data/odd.media.media', 'never the database file itself');
});

t.test("two databases in one folder: each has its own archive, and one's sweep never deletes the other's files", async (t) => {
  const dir = tempDir(t);
  const a = await mediaApp(t, { databasePath: join(dir, 'a.db') });
  const [id] = await a.receive(1);
  const b = await buildTestApp(t, { databasePath: join(dir, 'b.db') });
  t.equal(a.app.mediaFiles.dir, join(dir, 'a.media'));
  t.equal(b.app.mediaFiles.dir, join(dir, 'b.media'));
  t.same(readdirSync(join(dir, 'a.media')), [String(id)]);

  // b has no message at all: with a shared folder its orphan sweep would take a's file for one of its deleted users.
  t.match(await b.app.retentionSweep.run(), { mediaFiles: 0 });
  t.same(readdirSync(join(dir, 'a.media')), [String(id)]);
  const served = await a.app.inject({ method: 'GET', url: `/api/media/${id}`, headers: a.auth });
  t.equal(served.statusCode, 200);
  t.same(served.rawPayload, a.images[0]);
});

t.test('upgrade: the shared media/ of an older version becomes the database\'s own folder when its files are this database\'s', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  const old = await mediaApp(t, { databasePath });
  const ids = await old.receive(2);
  await old.app.close();
  // What an older version left: the files in media/ beside the database.
  renameSync(join(dir, 'gateway.media'), join(dir, 'media'));

  // Another database in the folder, with no stored files of its own, leaves media/ alone.
  const other = await buildTestApp(t, { databasePath: join(dir, 'other.db') });
  await other.app.retentionSweep.run();
  t.same(readdirSync(join(dir, 'media')).sort(), ids.map(String).sort(), 'not adopted, nothing deleted by the other database');

  const upgraded = await buildTestApp(t, { databasePath });
  t.notOk(existsSync(join(dir, 'media')), 'moved, not copied');
  t.equal(upgraded.app.mediaFiles.dir, join(dir, 'gateway.media'));
  t.match(upgraded.logs(), /"msg":"The media archive moved to the database's own folder"/);
  const auth = bearer(upgraded.app, upgraded.app.usersRepo.findById(old.user.id)!);
  for (const [i, id] of ids.entries()) {
    t.equal(downloadState(upgraded.app, id), 'stored');
    const served = await upgraded.app.inject({ method: 'GET', url: `/api/media/${id}`, headers: auth });
    t.equal(served.statusCode, 200);
    t.same(served.rawPayload, old.images[i]);
  }
});

t.test('upgrade: a media/ that lacks some of this database\'s files is not taken; those files are downloaded again', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  const old = await mediaApp(t, { databasePath });
  const [kept, lost] = await old.receive(2);
  await old.app.close();
  renameSync(join(dir, 'gateway.media'), join(dir, 'media'));
  rmSync(join(dir, 'media', String(lost)));

  // Not listening: the download worker does not run, so the queue shows what start-up decided.
  const restarted = await buildTestApp(t, { databasePath });
  t.same(readdirSync(join(dir, 'media')), [String(kept)], 'left as it was');
  t.same(readdirSync(join(dir, 'gateway.media')), []);
  t.equal(downloadState(restarted.app, kept!), 'pending');
  t.equal(downloadState(restarted.app, lost!), 'pending');
  t.equal(readFileSync(join(dir, 'media', String(kept))).length > 0, true);
});
