// The one door for writes: concurrent synchronous write bodies share one transaction, so one fsync (group commit).
import type Database from 'better-sqlite3';

interface Job { body: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface Writer {
  /**
   * Queues `body` (synchronous: no await inside) for the next batch. Each body runs in its own savepoint, so
   * one that throws is rolled back alone; the promise settles only after the whole batch committed.
   */
  write<T>(body: () => T): Promise<T>;
  /** Runs `body` at once in a transaction of its own (start-up, shell commands): no batching. */
  writeNow<T>(body: () => T): T;
  /** Batches committed so far, and the bodies they held (for metrics and tests). */
  stats(): { batches: number; writes: number };
}

export function createWriter(client: Database.Database): Writer {
  let queue: Job[] = [];
  let batches = 0;
  let writes = 0;
  // better-sqlite3: a transaction function called inside another one runs as a savepoint.
  const atomic = client.transaction((body: () => unknown) => body());

  function runBatch(batch: Job[]): Outcome[] {
    return atomic.immediate(() => batch.map((job): Outcome => {
      try {
        return { ok: true, value: atomic(job.body) };
      } catch (error) {
        // A disk or I/O fault can roll back the whole transaction under us: then the batch as a whole failed.
        if (!client.inTransaction) throw error;
        return { ok: false, error };
      }
    })) as Outcome[];
  }

  function flush(): void {
    const batch = queue;
    queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = runBatch(batch);
    } catch (error) {
      // Nothing of the batch is stored: every caller learns it.
      for (const job of batch) job.reject(error);
      return;
    }
    batches += 1;
    writes += batch.length;
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }

  return {
    write<T>(body: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // setImmediate runs after the I/O callbacks of this loop turn: every request that arrived with this one joins the batch.
        if (queue.length === 0) setImmediate(flush);
        queue.push({ body, resolve: resolve as (value: unknown) => void, reject });
      });
    },
    writeNow: <T>(body: () => T): T => atomic.immediate(body) as T,
    stats: () => ({ batches, writes }),
  };
}
