// Opens the SQLite file with durable pragmas, applies the committed migrations; transactions and a liveness probe.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { projectRoot } from '../config';
import * as tables from './tables';

export type DB = BetterSQLite3Database<typeof tables> & { $client: Database.Database };

export function openDatabase(path: string): DB {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: a committed transaction survives a power cut, not only a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // A listing reads the latest messages of many conversations, spread over the whole file: with SQLite's default
  // 2 MB page cache every listing goes back to the OS for thousands of pages once the database outgrows it.
  sqlite.pragma('cache_size = -32768'); // KiB: 32 MiB, several times the pages of a full page of conversations
  // The WAL file shrinks back to this after a checkpoint instead of keeping its largest size.
  sqlite.pragma('journal_size_limit = 67108864');
  const db = drizzle(sqlite, { schema: tables });
  migrate(db, { migrationsFolder: join(projectRoot, 'data', 'migrations') });
  return db;
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
