// Sends cut off between the network call and storing its answer (crash, kill, full disk) never stay `pending`: at
// start-up and every minute, an outbound message still pending without a wamid after the send budget becomes `failed`
// with error code INTERRUPTED and its credit goes back to the month it was taken from. Sends this process still
// handles (a settle write waiting for storage) are skipped: their stored outcome wins.
import type { CreditsRepo } from '../db/credits-repo';
import type { MessagesRepo, PendingOutbound } from '../db/messages-repo';
import type { Writer } from '../db/writer';
import { monthKey } from '../support/time';
import { createPeriodicJob, nextTurn } from './periodic';

type LogFn = (details: object, message: string) => void;
export interface SettleInterruptedDeps {
  writer: Writer;
  messages: Pick<MessagesRepo, 'pendingOutboundIn' | 'lastId' | 'markInterrupted'>;
  credits: Pick<CreditsRepo, 'refund'>;
  /** Messages this process is still sending or storing. */
  isBusy: (messageId: number) => boolean;
  /** A pending message older than this (ms) can no longer be settled by its request. */
  budgetMs: number;
  timezone: string;
  now: () => Date;
  log: { info: LogFn; error: LogFn };
  intervalMs?: number;
}

const EVERY_MINUTE = 60_000;
/** Message ids looked at per read: one short statement on the primary key, then a turn of the event loop. */
const SCAN_STEP = 2000;
/** Messages settled per write. */
const WRITE_BATCH = 100;
const INTERRUPTED = JSON.stringify({
  code: 'INTERRUPTED',
  title: 'The send was interrupted before its outcome was stored',
  details: 'The gateway stopped, or could not store the answer, during the send: the message may or may not have been sent. Its credit was refunded.',
});

export function createSettleInterrupted(deps: SettleInterruptedDeps) {
  // Every message with an id at or below this is settled or was never a pending send: later runs start above it.
  let settledUpTo = 0;

  /** Marks `due` interrupted and refunds each, in one write; how many moved (one that settled meanwhile does not). */
  const settle = (due: PendingOutbound[], at: number) => deps.writer.write(() => {
    let moved = 0;
    for (const message of due) {
      if (!deps.messages.markInterrupted(message.id, INTERRUPTED, at)) continue;
      deps.credits.refund(message.userId, monthKey(new Date(message.createdAt), deps.timezone));
      moved += 1;
    }
    return moved;
  });

  async function walk(): Promise<number> {
    const now = deps.now().getTime();
    const cutoff = now - deps.budgetMs;
    const upTo = deps.messages.lastId();
    let from = settledUpTo;
    // The lowest id left pending on purpose (too young, or still handled here): the next run starts below it.
    let keepFrom: number | undefined;
    let moved = 0;
    try {
      while (from < upTo && !job.stopped()) {
        await nextTurn();
        const to = Math.min(from + SCAN_STEP, upTo);
        const pending = deps.messages.pendingOutboundIn(from, to);
        const due = pending.filter((m) => m.createdAt < cutoff && !deps.isBusy(m.id));
        const kept = pending.find((m) => !due.includes(m));
        if (kept) keepFrom = Math.min(keepFrom ?? kept.id, kept.id);
        for (let i = 0; i < due.length && !job.stopped(); i += WRITE_BATCH) {
          const chunk = due.slice(i, i + WRITE_BATCH);
          try {
            moved += await settle(chunk, now);
          } catch (error) {
            keepFrom = Math.min(keepFrom ?? chunk[0]!.id, chunk[0]!.id);
            throw error;
          }
        }
        from = to;
      }
    } catch (error) {
      deps.log.error({ err: error }, 'settling interrupted sends stopped; it runs again within a minute');
    }
    settledUpTo = Math.max(settledUpTo, Math.min(from, (keepFrom ?? Infinity) - 1));
    if (moved > 0) deps.log.info({ messages: moved }, 'interrupted sends marked failed (INTERRUPTED) and their credits refunded');
    return moved;
  }

  const job = createPeriodicJob(walk, deps.intervalMs ?? EVERY_MINUTE);
  return job;
}
export type SettleInterrupted = ReturnType<typeof createSettleInterrupted>;
