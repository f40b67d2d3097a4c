// The one door for writes: concurrent synchronous write bodies share one transaction (up to MAX_BATCH), so one fsync
// (group commit). A batch commits with synchronous=NORMAL (SQLite writes its WAL frames to the file but does not wait
// for the disk), then the writer fdatasyncs the -wal file itself, and only then are the batch's callers answered: what
// is answered is on disk exactly as with FULL. A slow disk is synced on libuv's thread pool, so that requests are
// served while it works; a fast one in place (see SYNC_IN_PLACE_MS).
// It also knows whether storage takes writes: a storage fault (disk full, I/O error, read-only file …) is rejected as
// 503 STORAGE_UNAVAILABLE and remembered until a write of the gateway's own traffic commits again (a readiness probe
// that fits where that write did not proves nothing).
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { asStorageError, storageFaultReason } from '../errors';

interface Job {
  body: (isolated: boolean) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void; probe?: boolean;
  /** Written by `writeRerunnable`: may run first without a savepoint of its own, and then again. */
  rerunnable?: boolean;
}
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Whether the last write reached the disk; when not, why (e.g. "the disk is full") and since when. */
export type StorageHealth = { ok: true } | { ok: false; reason: string; code: string; since: number };

export interface WriterOptions {
  /** Told when storage starts refusing writes and when it takes them again (for the log). */
  onHealthChange?: (health: StorageHealth) => void;
  /** While storage refuses writes, readiness checks try a real write at most this often. */
  probeEveryMs?: number;
  /** Syncs are run in place while the recent ones took less than this (ms; default SYNC_IN_PLACE_MS; 0: never). */
  syncInPlaceMs?: number;
  /** The clock syncs are timed by (ms, monotonic; tests slow the disk down with it). */
  clock?: () => number;
}

export interface Writer {
  /**
   * Queues `body` (synchronous: no await inside) for the next batch. Each body runs in its own savepoint, so
   * one that throws is rolled back alone; the promise settles only after the whole batch committed.
   * A storage fault rejects with the AppError 503 STORAGE_UNAVAILABLE (the one place such errors are mapped).
   */
  write<T>(body: () => T): Promise<T>;
  /**
   * As `write`, for a body that may run twice (the webhook's callbacks: the busiest writes). The rerunnable bodies at the
   * head of a batch run first one after another without savepoints (`isolated` false), which saves each its savepoint
   * and SQLite's copies of the pages it changes (some 10 µs a callback); such a run must let every error out rather than
   * catch it and go on. When one throws, the transaction is rolled back and the batch runs again, each body in its
   * own savepoint (`isolated` true), as `write` runs it. Side effects outside the database belong after the promise.
   */
  writeRerunnable<T>(body: (isolated: boolean) => T): Promise<T>;
  /** Runs `body` at once in a transaction of its own (start-up, shell commands): no batching. */
  writeNow<T>(body: () => T): T;
  /** Since start (metrics and tests): batches committed, the bodies they held, the syncs of the -wal file (those run in
   * place; those of SLOW_SYNC_MS or more) and their time. */
  stats(): { batches: number; writes: number } & SyncStats;
  /** Waits for the disk syncs under way, then lets go of the -wal file (before the connection closes). */
  close(): Promise<void>;
  /** What the writes taught us; no I/O. Not ok from a storage fault of a write until a write (not a probe) commits. */
  health(): StorageHealth;
  /**
   * For readiness: healthy → at once, without writing. While faulted, a tiny write that needs a fresh page (a table
   * created and dropped) tells whether storage is back, at most once per `probeEveryMs`; the last answer otherwise.
   * A probe that commits clears a fault only when a probe caused it (or the last one): a callback or send that failed
   * keeps the gateway unready until a write of its own kind commits, since a tiny probe may fit where it did not.
   */
  checkWrites(): Promise<StorageHealth>;
  /** Calls `listener` after every commit, before the writers' promises settle (the event feed wakes its readers). */
  afterCommit(listener: () => void): void;
}

const PROBE_SQL = 'CREATE TABLE readiness_probe (x); DROP TABLE readiness_probe;';
/**
 * Bodies in one transaction at most: a burst larger than this (a 1,000-item batch of sends) commits in several, with a
 * turn of the event loop between, so timers (the send queue's pace) and requests are not held for all of it.
 */
export const MAX_BATCH = 100;

/**
 * Syncs whose recent times stay under this many milliseconds run in place. Handing a sync to the thread pool frees the
 * event loop while the disk works, but the hand-off, the thread's wake-up and the answer's cost time too, and the next
 * batch waits for the answer: a disk that syncs in a fraction of a millisecond (an SSD that acknowledges from a
 * protected cache, most virtual machines' disks) is synced sooner and cheaper in place. A disk slower than this is
 * synced on the thread pool.
 */
export const SYNC_IN_PLACE_MS = 0.5;
/** Weight of the newest sync in the smoothed time: a slow sync moves the syncs to the thread pool at once, and some
 * ten fast ones bring them back. */
const SYNC_WEIGHT = 0.25;
/**
 * While the syncs run on the thread pool, one runs in place this often to time the disk again: a sync on the thread
 * pool is timed up to the event loop's answer, which under load takes longer than the sync itself, so its times alone
 * would keep the syncs there after a single slow one. The interval doubles while these syncs stay slow, up to
 * PROBE_MAX_MS (a slow disk holds the event loop for one sync that often at most).
 */
export const PROBE_EVERY_MS = 1000;
const PROBE_MAX_MS = 30_000;
/** A sync at least this long counts as slow in the stats: a disk that makes callbacks and sends wait. */
export const SLOW_SYNC_MS = 10;

/** The -wal file's syncs since start: how many, how many ran in place, how many took SLOW_SYNC_MS or more, their time in all. */
export interface SyncStats { syncs: number; syncsInPlace: number; slowSyncs: number; syncMs: number }
const NO_SYNCS: SyncStats = { syncs: 0, syncsInPlace: 0, slowSyncs: 0, syncMs: 0 };

interface WalSync {
  /** Whether the next sync runs in place: the smoothed time of the recent ones is under the limit, or a probe is due. */
  inPlace(): boolean;
  /** Syncs now, in place; the error when it failed. */
  syncNow(): unknown;
  /** Syncs on the thread pool; `done` gets the error when it failed. */
  sync(done: (error: unknown) => void): void;
  close(): void;
  stats(): SyncStats;
}

/**
 * Syncs the connection's -wal file to disk, or undefined when there is none to sync (an in-memory or rollback-journal
 * database: its commits sync themselves). Opened at the first sync, after a commit created it. Each sync is timed; one
 * on the thread pool from its hand-off to its answer, an upper bound of the disk's own time.
 */
function walSync(client: Database.Database, inPlaceMs: number, clock: () => number): WalSync | undefined {
  if (client.memory || client.pragma('journal_mode', { simple: true }) !== 'wal') return undefined;
  let fd: number | undefined;
  let smoothed = 0;
  let probeEvery = PROBE_EVERY_MS;
  let probeAt = Infinity;
  const totals: SyncStats = { ...NO_SYNCS };
  const fast = () => smoothed < inPlaceMs;
  const timed = (started: number, inPlace: boolean) => {
    const ended = clock();
    const ms = ended - started;
    totals.syncs += 1;
    if (inPlace) totals.syncsInPlace += 1;
    totals.syncMs += ms;
    if (ms >= SLOW_SYNC_MS) totals.slowSyncs += 1;
    if (inPlace && !fast()) {
      // A probe: a fast disk brings the syncs back in place at once, a slow one is probed half as often.
      if (ms < inPlaceMs) {
        smoothed = ms;
        probeEvery = PROBE_EVERY_MS;
      } else {
        probeEvery = Math.min(2 * probeEvery, PROBE_MAX_MS);
        probeAt = ended + probeEvery;
      }
      return;
    }
    // On the thread pool only a time under the limit says something of the disk (an upper bound of it).
    if (!inPlace && ms >= inPlaceMs) return;
    const wasFast = fast();
    smoothed += SYNC_WEIGHT * (ms - smoothed);
    if (wasFast && !fast()) probeAt = ended + probeEvery;
  };
  const descriptor = () => (fd ??= openSync(`${client.name}-wal`, 'r'));
  return {
    inPlace: () => fast() || clock() >= probeAt,
    syncNow() {
      const started = clock();
      try {
        fdatasyncSync(descriptor());
        return undefined;
      } catch (error) {
        return error;
      } finally {
        timed(started, true);
      }
    },
    sync(done) {
      const started = clock();
      try {
        fdatasync(descriptor(), (error) => {
          timed(started, false);
          done(error ?? undefined);
        });
      } catch (error) {
        done(error);
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
    stats: () => ({ ...totals }),
  };
}

/** A failed sync of the -wal file, as SQLite reports its own failed fsync (a storage fault: 503, unready). */
const syncFailed = (error: unknown): Error =>
  new Database.SqliteError(`the -wal file could not be synced to disk: ${(error as Error).message}`, 'SQLITE_IOERR_FSYNC');

/** A body of the optimistic run threw: the batch runs again, each body isolated. */
class RunIsolated extends Error {}

class TransactionLost extends Error {
  constructor(readonly error: unknown) {
    super('the transaction was rolled back under a write body');
  }
}

export function createWriter(client: Database.Database, options: WriterOptions = {}): Writer {
  let queue: Job[] = [];
  let batches = 0;
  let writes = 0;
  let health: StorageHealth = { ok: true };
  // The last storage fault of a real write (not a probe); only a real write that commits clears it.
  let trafficFault: Extract<StorageHealth, { ok: false }> | undefined;
  let probedAt = -Infinity;
  const commitListeners: (() => void)[] = [];
  const tellCommitted = () => commitListeners.forEach((listener) => listener());
  // better-sqlite3: a transaction function called inside another one runs as a savepoint.
  const atomic = client.transaction((body: () => unknown) => body());
  const wal = walSync(client, options.syncInPlaceMs ?? SYNC_IN_PLACE_MS, options.clock ?? (() => performance.now()));
  // Only the writer's batches commit without waiting for the disk, since only they sync the -wal file themselves:
  // every other transaction on this connection (writeNow, start-up) keeps the connection's FULL.
  const syncMode = client.pragma('synchronous', { simple: true }) as number;
  const deferSync = wal && client.prepare('PRAGMA synchronous = NORMAL');
  const restoreSync = wal && client.prepare(`PRAGMA synchronous = ${syncMode}`);
  let syncing = 0;
  // Closers waiting for the syncs under way.
  const synced: (() => void)[] = [];

  function setHealth(next: StorageHealth): void {
    if (next.ok === health.ok && (next.ok || (!health.ok && next.code === health.code))) return;
    health = next;
    options.onHealthChange?.(next);
  }

  /** Writes committed: healthy, unless only probes committed while a real write's fault stands. */
  function committed(real: boolean): void {
    if (real) trafficFault = undefined;
    setHealth(trafficFault ?? { ok: true });
  }

  /** A storage fault seen by a write (`real`: not a probe); returns the error callers get. */
  function noteError(error: unknown, real = true): unknown {
    const reason = storageFaultReason(error);
    if (reason !== undefined) {
      const code = String((error as { code?: unknown }).code);
      const next = health.ok ? { ok: false as const, reason, code, since: Date.now() } : { ...health, reason, code };
      if (real) trafficFault = next;
      setHealth(next);
    }
    return asStorageError(error) ?? error;
  }

  /** Each body in its own savepoint: one that throws is rolled back alone. */
  function isolated(job: Job): Outcome {
    try {
      return { ok: true, value: atomic(() => job.body(true)) };
    } catch (error) {
      // A disk or I/O fault can roll back the whole transaction under us: then the batch as a whole failed.
      if (!client.inTransaction) throw new TransactionLost(error);
      return { ok: false, error };
    }
  }

  /** The rerunnable bodies at the batch's head without savepoints, the rest isolated; RunIsolated when one of the first threw. */
  function optimistic(batch: Job[]): Outcome[] {
    const outcomes: Outcome[] = [];
    let i = 0;
    for (; i < batch.length && batch[i]!.rerunnable; i++) {
      try {
        outcomes.push({ ok: true, value: batch[i]!.body(false) });
      } catch {
        throw new RunIsolated();
      }
    }
    for (; i < batch.length; i++) outcomes.push(isolated(batch[i]!));
    return outcomes;
  }

  function runBatch(batch: Job[]): Outcome[] {
    deferSync?.run();
    try {
      if (batch[0]?.rerunnable) {
        try {
          return atomic.immediate(() => optimistic(batch)) as Outcome[];
        } catch (error) {
          if (!(error instanceof RunIsolated)) throw error;
        }
      }
      return atomic.immediate(() => batch.map(isolated)) as Outcome[];
    } finally {
      restoreSync?.run();
    }
  }

  /**
   * SQLite rolled the transaction back under a body (it does so on a full disk or an I/O error), but the body caught
   * that error itself and we see only a follow-up one. A probe write tells the storage fault, if that is what it was.
   */
  function lostBecause(lost: TransactionLost): unknown {
    if (storageFaultReason(lost.error) !== undefined) return lost.error;
    try {
      atomic.immediate(() => client.exec(PROBE_SQL));
    } catch (probeError) {
      if (storageFaultReason(probeError) !== undefined) return probeError;
    }
    return lost.error;
  }

  let flushScheduled = false;
  /**
   * Flushes the queue on the next turn, unless a batch's -wal sync is under way: then the next batch waits for it and
   * grows (one commit and one sync for all that arrived meanwhile), as it did when the commit itself waited for the disk.
   */
  function scheduleFlush(): void {
    if (flushScheduled || syncing > 0 || queue.length === 0) return;
    flushScheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    flushScheduled = false;
    const batch = queue.length > MAX_BATCH ? queue.splice(0, MAX_BATCH) : queue;
    if (batch === queue) queue = [];
    commit(batch);
    // The rest of a burst larger than MAX_BATCH: on the next turn, or once this batch's sync ended.
    scheduleFlush();
  }

  /** Commits `batch`; its callers are answered at once, or (a -wal file to sync) once the sync ended. */
  function commit(batch: Job[]): void {
    let outcomes: Outcome[];
    try {
      outcomes = runBatch(batch);
    } catch (error) {
      // Nothing of the batch is stored: every caller learns it.
      const answered = noteError(error instanceof TransactionLost ? lostBecause(error) : error, batch.some((job) => !job.probe));
      for (const job of batch) job.reject(answered);
      return;
    }
    batches += 1;
    writes += batch.length;
    if (wal === undefined) {
      answer(batch, outcomes);
      return;
    }
    if (wal.inPlace()) {
      afterSync(batch, outcomes, wal.syncNow());
      return;
    }
    syncing += 1;
    wal.sync((error) => {
      syncing -= 1;
      afterSync(batch, outcomes, error);
      if (syncing === 0) {
        for (const resolve of synced.splice(0)) resolve();
        scheduleFlush();
      }
    });
  }

  /**
   * Listeners (event streams, deliveries) learn of the batch only once it is on disk, as its callers do. A sync that
   * fails leaves the batch committed but perhaps not durable: its callers get 503 (a callback comes again and is found
   * already stored; a send never reached the network, and its pending row is settled as interrupted).
   */
  function afterSync(batch: Job[], outcomes: Outcome[], error: unknown): void {
    if (error === undefined) {
      answer(batch, outcomes);
      return;
    }
    const answered = noteError(syncFailed(error), batch.some((job) => !job.probe));
    for (const job of batch) job.reject(answered);
  }

  /** The batch is stored: listeners are told, then each caller gets its body's outcome. */
  function answer(batch: Job[], outcomes: Outcome[]): void {
    tellCommitted();
    // Committed: storage takes writes again, unless one of the bodies just hit a fault of its own.
    const faults = outcomes.filter((o) => !o.ok && storageFaultReason(o.error) !== undefined);
    if (faults.length === 0) committed(batch.some((job, i) => !job.probe && outcomes[i]!.ok));
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(noteError(outcome.error, !job.probe));
    });
  }

  function write<T>(body: (isolated: boolean) => T, probe = false, rerunnable = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // setImmediate runs after the I/O callbacks of this loop turn: every request that arrived with this one joins the batch.
      queue.push({ body, resolve: resolve as (value: unknown) => void, reject, probe, rerunnable });
      scheduleFlush();
    });
  }

  return {
    write: (body) => write(body),
    writeRerunnable: (body) => write(body, false, true),
    writeNow<T>(body: () => T): T {
      try {
        const value = atomic.immediate(body) as T;
        committed(true);
        tellCommitted();
        return value;
      } catch (error) {
        throw noteError(error);
      }
    },
    stats: () => ({ batches, writes, ...(wal?.stats() ?? NO_SYNCS) }),
    async close() {
      if (syncing > 0) await new Promise<void>((resolve) => synced.push(resolve));
      wal?.close();
    },
    afterCommit: (listener) => void commitListeners.push(listener),
    health: () => health,
    async checkWrites(): Promise<StorageHealth> {
      const now = Date.now();
      if (health.ok || now - probedAt < (options.probeEveryMs ?? 1000)) return health;
      probedAt = now;
      await write(() => client.exec(PROBE_SQL), true).catch(() => undefined);
      return health;
    },
  };
}
