// The single writer: concurrent writes share one transaction; each caller is answered after the commit.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { createWriter } from '../src/db/writer';
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
  t.same(writer.stats(), { batches: 1, writes: 50 });
  t.ok(seen.every((n) => n === 50), 'a reader on its own connection sees the whole batch as soon as any caller is answered');
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
  t.same(writer.stats(), { batches: 1, writes: 3 });
});

t.test('writes after a batch form the next one; writeNow commits at once', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  await writer.write(() => insert.run('first'));
  await writer.write(() => insert.run('second'));
  writer.writeNow(() => insert.run('now'));
  t.equal(reader.prepare('SELECT count(*) FROM items').pluck().get(), 3);
  t.same(writer.stats(), { batches: 2, writes: 2 });
});

t.test('a write that finds the disk full fails with SQLITE_FULL and stores nothing of itself', async (t) => {
  const { db, reader, insert } = open(t);
  const writer = createWriter(db);
  // A full database: the file may not grow past its current pages.
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages}`);
  const big = 'x'.repeat(64 * 1024);
  const results = await Promise.allSettled([writer.write(() => insert.run('small')), writer.write(() => insert.run(big))]);
  t.ok(results.some((r) => r.status === 'rejected'), 'the write that needs new pages fails');
  const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.match(failure.reason, { code: 'SQLITE_FULL' });
  t.ok((reader.prepare('SELECT count(*) FROM items WHERE name = ?').pluck().get(big) as number) === 0, 'the big row is not stored');
});
