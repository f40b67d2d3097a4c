// Sends of this process between their reserve and their settle. The settle job leaves them alone, a repeat of their
// idempotency key learns whether they still run, and a settle write that storage refused is retried until it lands.
import { setTimeout as wait } from 'node:timers/promises';
import type { Writer } from '../db/writer';
import { asStorageError } from '../errors';

type LogFn = (details: object, message: string) => void;

/** `sending`: the network call runs. `storing`: its outcome is known here but storage has not taken it yet. */
export type SendPhase = { phase: 'sending' } | { phase: 'storing'; wamid?: string };

export interface SendTrackerDeps {
  writer: Writer;
  log: { info: LogFn; error: LogFn };
  /** Pause between two tries of a refused settle write. */
  retryEveryMs?: number;
}

export function createSendTracker(deps: SendTrackerDeps) {
  const phases = new Map<number, SendPhase>();
  const background = new Set<Promise<void>>();
  const retryEveryMs = deps.retryEveryMs ?? 500;
  let stopped = false;
  const closing = new AbortController();
  // Timers that keep no process alive and end at once when the app stops.
  const sleep = (ms: number) => wait(ms, undefined, { signal: closing.signal, ref: false }).catch(() => undefined);

  /** Retries `body` until it commits or the app stops; the send stays tracked (so never settled as interrupted) until then. */
  async function retryUntilStored(messageId: number, body: () => unknown): Promise<void> {
    for (let tries = 1; !stopped; tries++) {
      await sleep(Math.min(retryEveryMs * tries, 5000));
      if (stopped) break;
      try {
        await deps.writer.write(body);
        phases.delete(messageId);
        deps.log.info({ messageId, tries }, 'send outcome stored after storage came back');
        return;
      } catch (error) {
        if (asStorageError(error) === undefined) {
          phases.delete(messageId);
          deps.log.error({ messageId, err: error }, 'send outcome cannot be stored; the send is settled as interrupted later');
          return;
        }
      }
    }
    const phase = phases.get(messageId);
    deps.log.error({ messageId, wamid: phase?.phase === 'storing' ? phase.wamid : undefined },
      'send outcome not stored before shutdown: the message will be settled as interrupted at the next start');
  }

  return {
    /** Called inside the write that stores the pending message. */
    begin(messageId: number): void {
      phases.set(messageId, { phase: 'sending' });
    },
    phaseOf: (messageId: number): SendPhase | undefined => phases.get(messageId),
    /** Still handled by this process (the settle job must not touch it). */
    busy: (messageId: number): boolean => phases.has(messageId),
    end(messageId: number): void {
      phases.delete(messageId);
    },

    /**
     * Runs the settle write `body`; while storage refuses it, tries again for up to `waitMs`. Still refused: rejects with
     * the storage error, and keeps retrying in the background until it commits (the send stays tracked meanwhile).
     */
    async settle<T>(messageId: number, body: () => T, waitMs: number, wamid?: string): Promise<T> {
      const deadline = Date.now() + waitMs;
      for (;;) {
        try {
          const value = await deps.writer.write(body);
          phases.delete(messageId);
          return value;
        } catch (error) {
          if (asStorageError(error) === undefined || stopped) {
            phases.delete(messageId);
            throw error;
          }
          if (Date.now() + retryEveryMs > deadline) {
            phases.set(messageId, { phase: 'storing', ...(wamid === undefined ? {} : { wamid }) });
            const retry = retryUntilStored(messageId, body).finally(() => background.delete(retry));
            background.add(retry);
            throw error;
          }
          await sleep(retryEveryMs);
        }
      }
    },

    /** No new try starts; resolves when the one under way (if any) has ended. Before the database closes. */
    async stop(): Promise<void> {
      stopped = true;
      closing.abort();
      await Promise.all([...background]);
    },
  };
}
export type SendTracker = ReturnType<typeof createSendTracker>;
