// Background replay of webhook events whose processing failed or never finished: at start-up and every few
// minutes, in small batches with a turn of the event loop between them, stoppable at any batch.
import type { BatchOutcome, ReplayBatch } from '../webhooks/inbox';

type LogFn = (details: object, message: string) => void;
export interface ReplayDeps {
  replayBatch(afterId: number): Promise<ReplayBatch | null>;
  log: { info: LogFn; error: LogFn };
  intervalMs?: number;
}

const EVERY_FIVE_MINUTES = 5 * 60_000;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createWebhookReplay(deps: ReplayDeps) {
  let stopped = false;
  let running: Promise<BatchOutcome> | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function walk(): Promise<BatchOutcome> {
    const totals: BatchOutcome = { events: 0, failed: 0, dead: 0 };
    let afterId = 0;
    try {
      for (;;) {
        await nextTurn();
        if (stopped) break;
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

  function run(): Promise<BatchOutcome> {
    running ??= walk().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    /** Processes every pending or failed event once (oldest first), or joins the run under way. */
    run,
    /** Resolves once no run is under way (without starting one). */
    idle: async (): Promise<void> => {
      await running;
    },
    /** A run now (it starts on the next turn of the event loop) and one every few minutes; the timer keeps no process alive. */
    start(): void {
      if (stopped || timer) return;
      void run();
      timer = setInterval(() => void run(), deps.intervalMs ?? EVERY_FIVE_MINUTES);
      timer.unref();
    },
    /** No new batch starts; resolves when the one under way (if any) has ended. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
export type WebhookReplay = ReturnType<typeof createWebhookReplay>;
