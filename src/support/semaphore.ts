// A counting semaphore whose waiters give up after a deadline, served first come first served.

export interface Semaphore {
  /** A release function once a slot is free, or undefined when none freed up within `waitMs`. */
  acquire(waitMs: number): Promise<(() => void) | undefined>;
  /** Work running and waiting right now. */
  readonly running: number;
  readonly waiting: number;
}

export function createSemaphore(slots: number): Semaphore {
  let running = 0;
  const queue: Array<(release: () => void) => void> = [];

  function releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = queue.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
      if (next) next(releaser());
      else running--;
    };
  }

  return {
    get running() { return running; },
    get waiting() { return queue.length; },
    acquire(waitMs) {
      if (running < slots) {
        running++;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve) => {
        const grant = (release: () => void) => {
          clearTimeout(timer);
          resolve(release);
        };
        const timer = setTimeout(() => {
          const at = queue.indexOf(grant);
          if (at !== -1) queue.splice(at, 1);
          resolve(undefined);
        }, waitMs);
        queue.push(grant);
      });
    },
  };
}
