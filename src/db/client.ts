// Opens the SQLite file with durable pragmas, applies the committed migrations; transactions and a liveness probe.
import { closeSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { projectRoot } from '../config';
import { ensurePrivateDir } from '../support/secret-file';
import * as tables from './tables';

export type DB = BetterSQLite3Database<typeof tables> & { $client: Database.Database };

/**
 * Creates the database file 0600 (whatever the umask) before SQLite opens it. SQLite gives the
 * -wal and -shm files it creates, now or after any later checkpoint or restart, the mode of the
 * database file (and chmods them to it, past the umask), so they are 0600 too.
 */
function createPrivateFile(path: string): void {
  ensurePrivateDir(dirname(path));
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    // An existing database keeps the mode its owner gave it (start-up warns when others can read it).
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Page cache of the writer's connection (negative: KiB): 8 MiB holds the indexes' upper levels; the pages it touches
 * beyond them are mostly new ones, and a bigger cache is only resident memory of the process.
 */
const CACHE_KIB = -8192;
/**
 * Page cache of a read-only connection (the listings'): a full answer of 5,000 messages of real length (a paragraph of
 * text each) lies on about as many pages, some 20 MiB. A least-recently-used cache smaller than that reads every one
 * of them from the operating system again at each listing (27 ms a listing with 8 or 16 MiB, 13 ms with 32 MiB, on
 * the bench's database after its callback scenarios). Taken only as pages are read.
 */
const READER_CACHE_KIB = -32768;

export function openDatabase(path: string): DB {
  if (path !== ':memory:') createPrivateFile(path);
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: a committed transaction survives a power cut, not only a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma(`cache_size = ${CACHE_KIB}`);
  // The WAL file shrinks back to this after a checkpoint instead of keeping its largest size.
  sqlite.pragma('journal_size_limit = 67108864');
  const db = drizzle(sqlite, { schema: tables });
  migrate(db, { migrationsFolder: join(projectRoot, 'data', 'migrations') });
  // A RETURNING clause keeps its rows in a temporary table: on a temporary file, every such statement (an event's
  // number, a conversation's id) writes to that file, 11 µs instead of 3 µs. Set after the migrations, so that an
  // upgrade's index builds still sort a large archive on disk rather than in memory.
  sqlite.pragma('temp_store = MEMORY');
  return db;
}

/**
 * A second, read-only connection to a database the app already opened (and migrated): WAL lets it read while the
 * writer commits, each statement on the latest committed snapshot.
 */
export function openReadOnly(path: string): DB {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma(`cache_size = ${READER_CACHE_KIB}`);
  return drizzle(sqlite, { schema: tables });
}

/** The database's directory and file when other users may read them (mode & 0o007), for a start-up warning. */
export function openToOthers(path: string): string[] {
  if (path === ':memory:') return [];
  return [dirname(path), path].filter((entry) => (statSync(entry).mode & 0o007) !== 0);
}

/** A better-sqlite3 transaction: the body must stay synchronous (no await inside). */
export function inTransaction<T>(db: DB, body: () => T): T {
  return db.$client.transaction(body).immediate();
}

/** Whether the database still answers a trivial query (the readiness probe). */
export function databaseAnswers(db: DB): boolean {
  try {
    db.$client.prepare('SELECT 1').get();
    return true;
  } catch {
    return false;
  }
}
