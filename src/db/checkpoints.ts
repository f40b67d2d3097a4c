// WAL checkpoints off the writer's event loop: copying committed pages from the -wal file back into the database is
// the costliest part of a commit when SQLite does it itself (every 1,000 pages, inside the commit that crosses them).
// The listing thread runs them instead, on a connection of its own, a few times a second; the writer's connection
// checkpoints itself only if the WAL ever grows past WRITER_CHECKPOINT_PAGES (the thread gone or far behind).
import Database from 'better-sqlite3';

const CHECKPOINT_EVERY_MS = 250;
/** Pages the writer's connection lets the WAL reach before it checkpoints itself, while the thread checkpoints. */
export const WRITER_CHECKPOINT_PAGES = 10_000;

export interface Checkpoints { stop(): void }

/** Checkpoints the database at `path` every CHECKPOINT_EVERY_MS (PASSIVE: it never waits for, nor blocks, a writer). */
export function startCheckpoints(path: string): Checkpoints {
  const sqlite = new Database(path, { fileMustExist: true });
  const checkpoint = () => {
    try {
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A busy or failing checkpoint is tried again next time; the writer's own limit stays the backstop.
    }
  };
  const timer = setInterval(checkpoint, CHECKPOINT_EVERY_MS);
  return {
    stop() {
      clearInterval(timer);
      sqlite.close();
    },
  };
}
