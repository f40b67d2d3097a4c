// The lifecycle every background job shares: a run now and one on an interval (one at a time: a second call joins
// the run under way), an unref'd timer, and a stop that lets the run under way end at its next batch.
export interface PeriodicJob<T> {
  /** One run now (or the one under way). */
  run(): Promise<T>;
  /** Resolves once no run is under way (without starting one). */
  idle(): Promise<void>;
  /** A run now and one every interval; the timer keeps no process alive. */
  start(): void;
  /** No new run or batch starts; resolves when the run under way (if any) has ended. */
  stop(): Promise<void>;
  /** Whether stop() was called: the work checks it between its batches. */
  stopped(): boolean;
}

/** A turn of the event loop: jobs yield between batches so requests keep being served. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createPeriodicJob<T>(work: () => Promise<T>, intervalMs: number): PeriodicJob<T> {
  let stopped = false;
  let running: Promise<T> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = (): Promise<T> => {
    running ??= work().finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    run,
    idle: async () => {
      await running;
    },
    start() {
      if (stopped || timer) return;
      void run();
      timer = setInterval(() => void run(), intervalMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
    stopped: () => stopped,
  };
}
