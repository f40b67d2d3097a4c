// Background replay of webhook events whose processing failed or never finished: at start-up and every few
// minutes, in small batches with a turn of the event loop between them, stoppable at any batch.
import type { BatchOutcome, ReplayBatch } from '../webhooks/inbox';
import { createPeriodicJob, nextTurn } from './periodic';

type LogFn = (details: object, message: string) => void;
export interface ReplayDeps {
  replayBatch(afterId: number): Promise<ReplayBatch | null>;
  log: { info: LogFn; error: LogFn };
  intervalMs?: number;
}

const EVERY_FIVE_MINUTES = 5 * 60_000;

export function createWebhookReplay(deps: ReplayDeps) {
  async function walk(): Promise<BatchOutcome> {
    const totals: BatchOutcome = { events: 0, failed: 0, dead: 0 };
    let afterId = 0;
    try {
      for (;;) {
        await nextTurn();
        if (job.stopped()) break;
        const batch = await deps.replayBatch(afterId);
        if (!batch) break;
        afterId = batch.lastId;
        totals.events += batch.events;
        totals.failed += batch.failed;
        totals.dead += batch.dead;
      }
    } catch (error) {
      deps.log.error({ err: error }, 'webhook replay interrupted; it runs again later');
    }
    if (totals.events > 0) deps.log.info(totals, 'webhook events processed again');
    return totals;
  }

  const job = createPeriodicJob(walk, deps.intervalMs ?? EVERY_FIVE_MINUTES);
  return job;
}
export type WebhookReplay = ReturnType<typeof createWebhookReplay>;
