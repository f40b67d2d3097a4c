// How busy this process's event loop has been lately: the share of the last sampling period it spent working
// (Node's event loop utilisation), for background work that should give way to live traffic.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Busy: over this share of the last period spent working. */
const BUSY_ABOVE = 0.5;
const SAMPLE_EVERY_MS = 500;

export function createLoadMonitor() {
  let last: EventLoopUtilization | undefined;
  let utilization = 0;
  let timer: NodeJS.Timeout | undefined;
  return {
    /** Whether the event loop worked over half of the last sampling period. */
    busy: (): boolean => utilization > BUSY_ABOVE,
    /** Samples every SAMPLE_EVERY_MS; the timer keeps no process alive. */
    start(): void {
      if (timer) return;
      last = performance.eventLoopUtilization();
      timer = setInterval(() => {
        const now = performance.eventLoopUtilization();
        utilization = performance.eventLoopUtilization(now, last).utilization;
        last = now;
      }, SAMPLE_EVERY_MS);
      timer.unref();
    },
    stop(): void {
      clearInterval(timer);
      timer = undefined;
      utilization = 0;
    },
  };
}
