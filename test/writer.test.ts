// The single writer: concurrent writes share one transaction; each caller is answered after the commit.
import { readdirSync, readlinkSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { createWriter, MAX_BATCH, PROBE_EVERY_MS } from '../src/db/writer';
import { tempDir } from './helper';

function open(t: Parameters<typeof tempDir>[0]) {
  const path = join(tempDir(t), 'writer.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  const reader = new Database(path, { readonly: true });
  t.teardown(() => { reader.close(); db.close(); });
  return { db, reader, insert: db.prepare('INSERT INTO items (name) VALUES (?)') };
}

t.test('concurrent writes share one batch, and each is visible to another connection when it resolves', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  const seen: number[] = [];
  const count = reader.prepare('SELECT count(*) FROM items').pluck();
  await Promise.all(Array.from({ length: 50 }, (_, i) =>
    writer.write(() => Number(insert.run(`item ${i}`).lastInsertRowid)).then((id) => {
      seen.push(count.get() as number);
      return id;
    })));
  t.match(writer.stats(), { batches: 1, writes: 50 });
  t.ok(seen.every((n) => n === 50), 'a reader on its own connection sees the whole batch as soon as any caller is answered');
});

t.test('a burst larger than MAX_BATCH commits in several transactions, in order, with a turn of the event loop between', async (t) => {
  const { db, insert } = open(t);
  const writer = createWriter(db);
  const order: string[] = [];
  const total = 2 * MAX_BATCH + 50;
  const writes = Array.from({ length: total }, (_, i) => writer.write(() => {
    if (i % MAX_BATCH === 0) order.push(`batch from ${i}`);
    if (i === 0) {
      // A timer made inside the first transaction, and due before it ends: the next turn of the loop runs it first.
      setTimeout(() => order.push('timer'), 0);
      for (const until = Date.now() + 3; Date.now() < until;);
    }
    return Number(insert.run(`item ${i}`).lastInsertRowid);
  }));
  const ids = await Promise.all(writes);
  t.match(writer.stats(), { batches: 3, writes: total });
  t.same(ids, Array.from({ length: total }, (_, i) => i + 1), 'the bodies ran in the order they were queued');
  t.same(order, [`batch from 0`, 'timer', `batch from ${MAX_BATCH}`, `batch from ${2 * MAX_BATCH}`]);
});

t.test('a body that throws is rolled back alone; the rest of its batch commits', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  const results = await Promise.allSettled([
    writer.write(() => insert.run('a')),
    writer.write(() => { insert.run('b'); insert.run('a'); }), // second insert violates UNIQUE: 'b' goes too
    writer.write(() => insert.run('c')),
  ]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.match((results[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.same(reader.prepare('SELECT name FROM items ORDER BY name').pluck().all(), ['a', 'c']);
  t.match(writer.stats(), { batches: 1, writes: 3 });
});

t.test('rerunnable bodies at a batch\'s head run without savepoints; when one throws, the batch runs again with one per body', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  const runs: string[] = [];
  const rerunnable = (name: string, body: () => void = () => insert.run(name)) => writer.writeRerunnable((isolated) => {
    runs.push(`${name}:${isolated ? 'isolated' : 'unisolated'}`);
    body();
    return name;
  });
  // All succeed: one run each, none isolated.
  t.same(await Promise.all([rerunnable('a'), rerunnable('b')]), ['a', 'b']);
  t.same(runs.splice(0), ['a:unisolated', 'b:unisolated']);

  // The second throws (after writing 'd': the whole first run is rolled back, not only its half), a plain write follows.
  let plainRuns = 0;
  const results = await Promise.allSettled([
    rerunnable('c'),
    rerunnable('d', () => { insert.run('d'); insert.run('a'); }),
    rerunnable('e'),
    writer.write(() => { plainRuns += 1; insert.run('plain'); }),
  ]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
  t.match((results[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.same(runs.splice(0), ['c:unisolated', 'd:unisolated', 'c:isolated', 'd:isolated', 'e:isolated'],
    'the batch stopped at the body that threw, then each ran in a savepoint of its own');
  t.equal(plainRuns, 1, 'a plain write after the rerunnable ones ran once: the first run never reached it');
  t.same(reader.prepare('SELECT name FROM items ORDER BY name').pluck().all(), ['a', 'b', 'c', 'e', 'plain']);
  t.match(writer.stats(), { batches: 2, writes: 6 });

  // A plain write at the head: the rerunnable ones behind it are isolated at once (a plain body never runs twice).
  await Promise.all([writer.write(() => insert.run('f')), rerunnable('g')]);
  t.same(runs.splice(0), ['g:isolated']);
});

t.test('writes after a batch form the next one; writeNow commits at once', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  await writer.write(() => insert.run('first'));
  await writer.write(() => insert.run('second'));
  writer.writeNow(() => insert.run('now'));
  t.equal(reader.prepare('SELECT count(*) FROM items').pluck().get(), 3);
  t.match(writer.stats(), { batches: 2, writes: 2 });
});

t.test('a write that finds the disk full fails with 503 STORAGE_UNAVAILABLE and stores nothing of itself; the writer recovers', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db, { probeEveryMs: 0 });
  // A full database: the file may not grow past its current pages.
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages}`);
  const big = 'x'.repeat(64 * 1024);
  const results = await Promise.allSettled([writer.write(() => insert.run('small')), writer.write(() => insert.run(big))]);
  t.ok(results.some((r) => r.status === 'rejected'), 'the write that needs new pages fails');
  const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.match(failure.reason, { statusCode: 503, code: 'STORAGE_UNAVAILABLE', message: 'The gateway cannot store data right now; nothing was changed, retry later',
    headers: { 'retry-after': '10' } });
  t.notMatch(failure.reason.message, /disk|full|SQLITE/, 'the cause is not for the client');
  t.ok((reader.prepare('SELECT count(*) FROM items WHERE name = ?').pluck().get(big) as number) === 0, 'the big row is not stored');
  t.match(writer.health(), { ok: false, code: 'SQLITE_FULL', reason: 'the disk is full' });
  t.match(await writer.checkWrites(), { ok: false, code: 'SQLITE_FULL' }, 'the probe write needs a page too');
  t.same(reader.prepare("SELECT name FROM sqlite_master WHERE name = 'readiness_probe'").all(), [], 'the probe leaves no table');

  db.pragma(`max_page_count = ${pages + 1000}`);
  const probed = writer.stats().batches;
  t.match(await writer.checkWrites(), { ok: false, code: 'SQLITE_FULL' }, 'the probe write commits, but a real write failed: not healthy yet');
  t.equal(writer.stats().batches, probed + 1, 'one probe write');
  t.same(reader.prepare("SELECT name FROM sqlite_master WHERE name = 'readiness_probe'").all(), []);
  await writer.write(() => insert.run(big));
  t.same(writer.health(), { ok: true }, 'a real write committed: healthy');
  t.same(await writer.checkWrites(), { ok: true });
  t.equal(writer.stats().batches, probed + 2, 'healthy: checking writes writes nothing');
});

t.test('errors that are not storage faults leave the writer healthy and pass through unchanged', async (t) => {
  const { db, insert } = open(t);
  const writer = createWriter(db, { onHealthChange: () => t.fail('no health change') });
  await writer.write(() => insert.run('a'));
  await t.rejects(writer.write(() => insert.run('a')), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.same(writer.health(), { ok: true });
});

t.test('a read-only database: 503 without the cause, which the health change tells once', async (t) => {
  const { db } = open(t);
  const path = db.name;
  const readonly = new Database(path, { readonly: true });
  t.teardown(() => readonly.close());
  const changes: unknown[] = [];
  const writer = createWriter(readonly, { onHealthChange: (h) => changes.push(h) });
  for (let i = 0; i < 2; i++) {
    await t.rejects(writer.write(() => readonly.prepare("INSERT INTO items (name) VALUES ('x')").run()),
      { statusCode: 503, code: 'STORAGE_UNAVAILABLE', message: 'The gateway cannot store data right now; nothing was changed, retry later' });
  }
  t.match(changes, [{ ok: false, code: /^SQLITE_READONLY/ }]);
});

t.test('while faulted, readiness checks write at most once per interval', async (t) => {
  const { db, insert } = open(t);
  const writer = createWriter(db, { probeEveryMs: 3_600_000 });
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  await t.rejects(writer.write(() => insert.run('x'.repeat(64 * 1024))), { code: 'STORAGE_UNAVAILABLE' });
  t.match(await writer.checkWrites(), { ok: false, code: 'SQLITE_FULL' });
  const after = writer.stats();
  db.pragma('max_page_count = 100000');
  t.match(await writer.checkWrites(), { ok: false }, 'the last answer: no second probe within the interval');
  t.same(writer.stats(), after);
  await writer.write(() => insert.run('small'));
  t.same(await writer.checkWrites(), { ok: true }, 'any committed write clears the fault');
});

for (const [where, syncInPlaceMs] of [['on the thread pool', 0], ['in place', Infinity]] as const) {
t.test(`a batch is answered only after its -wal file is synced (${where}); other transactions keep the connection's FULL`, async (t) => {
  const { db, reader, insert } = open(t);
  db.pragma('synchronous = FULL');
  const writer = createWriter(db, { probeEveryMs: 0, syncInPlaceMs });
  const wal = `${db.name}-wal`;
  await writer.write(() => insert.run('first'));
  t.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL again once the batch committed');

  // The -wal file cannot be opened for the sync: the batch is committed, but its caller is not told it is stored.
  await writer.close();
  renameSync(wal, `${wal}.away`);
  const told: string[] = [];
  writer.afterCommit(() => told.push('committed'));
  await t.rejects(writer.write(() => insert.run('unsynced')),
    { statusCode: 503, code: 'STORAGE_UNAVAILABLE', message: 'The gateway cannot store data right now; nothing was changed, retry later' });
  t.match(writer.health(), { ok: false, code: 'SQLITE_IOERR_FSYNC', reason: 'the disk reports an I/O error' });
  t.same(told, [], 'listeners are told of a batch only once it is on disk');
  renameSync(`${wal}.away`, wal);
  await writer.write(() => insert.run('second'));
  t.same(told, ['committed']);
  t.same(writer.health(), { ok: true }, 'the next synced batch clears the fault');
  t.same(reader.prepare('SELECT name FROM items ORDER BY id').pluck().all(), ['first', 'unsynced', 'second']);

  // SQLite holds the -wal file open too: the writer's own descriptor is one more.
  const walDescriptors = () => readdirSync('/proc/self/fd').filter((fd) => {
    try { return readlinkSync(`/proc/self/fd/${fd}`) === wal; } catch { return false; }
  }).length;
  const held = walDescriptors();
  t.match(writer.stats(), { batches: 3, syncsInPlace: syncInPlaceMs === 0 ? 0 : 3 });
  await writer.close();
  t.equal(walDescriptors(), held - 1, 'close lets go of the descriptor the syncs used');
});
}

t.test('syncs run in place while the disk syncs fast, on the thread pool once one was slow, and in place again after fast ones', async (t) => {
  const { db, reader, insert } = open(t);
  // The writer reads its clock before and after each sync: every reading moves it on by one sync's time.
  let syncMs = 0.1;
  let now = 0;
  const writer = createWriter(db, { clock: () => (now += syncMs) });
  let n = 0;
  const syncedInPlace = async () => {
    const before = writer.stats().syncsInPlace;
    await writer.write(() => insert.run(`item ${n++}`));
    return writer.stats().syncsInPlace > before;
  };
  t.ok(await syncedInPlace(), 'a fast disk: in place');
  syncMs = 20;
  t.ok(await syncedInPlace(), 'the first slow sync: still in place, where it is timed');
  t.notOk(await syncedInPlace(), 'after a slow sync: on the thread pool');
  t.notOk(await syncedInPlace(), 'a slow disk stays on the thread pool');
  syncMs = 0.1;
  let fast = 0;
  while (!(await syncedInPlace()) && fast < 100) fast += 1;
  t.ok(fast > 1 && fast < 30, `in place again after ${fast} fast syncs on the thread pool`);
  t.equal(reader.prepare('SELECT count(*) FROM items').pluck().get(), n, 'every write stored either way');
  // Every sync counted once (one a write here), the three of 20 ms as slow, their times summed.
  const stats = writer.stats();
  t.match(stats, { syncs: n, slowSyncs: 3 });
  t.ok(Math.abs(stats.syncMs - (3 * 20 + (n - 3) * 0.1)) < 1e-6, `sync time in all: ${stats.syncMs} ms`);
  await writer.close();
});

t.test('while syncs run on the thread pool, one runs in place after a second, then after 2 and 4 s while the disk stays slow', async (t) => {
  const { db, insert } = open(t);
  // Every reading of the clock moves it on by one slow sync: the thread pool's times say nothing of the disk then.
  let now = 0;
  const writer = createWriter(db, { clock: () => (now += 20) });
  const inPlaceAt: number[] = [];
  for (let i = 0; i < 150; i++) {
    const before = writer.stats().syncsInPlace;
    await writer.write(() => insert.run(`item ${i}`));
    if (writer.stats().syncsInPlace > before) inPlaceAt.push(now);
  }
  const gaps = inPlaceAt.slice(1).map((at, i) => at - inPlaceAt[i]!);
  t.equal(gaps.length, 3, `in place: the first sync and ${gaps.length} probes (at ${inPlaceAt.join(', ')} ms)`);
  [PROBE_EVERY_MS, 2 * PROBE_EVERY_MS, 4 * PROBE_EVERY_MS].forEach((every, i) =>
    t.ok(gaps[i]! >= every && gaps[i]! < every + 200, `probe ${i + 1}: ${gaps[i]} ms after the one before (${every} ms and a write or two)`));
  t.match(writer.stats(), { syncs: 150, slowSyncs: 150 });
  await writer.close();
});

t.test('an in-memory database has no -wal file: batches are answered at commit', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
  const writer = createWriter(db);
  t.equal(await writer.write(() => Number(db.prepare("INSERT INTO items (name) VALUES ('a')").run().lastInsertRowid)), 1);
  await writer.close();
});
