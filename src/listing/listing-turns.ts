// Per-user turns for conversation listings: at most USER_TURNS of one user under way at once, the others queued in
// arrival order; a listing whose client went away while it waited leaves the queue and is never run.
import { AppError } from '../errors';

/** Listings of one user under way at once; more wait their turn. */
export const USER_TURNS = 4;

/** The listing's client went away before its turn (never answered: there is nobody to answer). */
export const abandoned = () => new AppError(499, 'LISTING_ABANDONED', 'The client went away before its listing started');

/** Per-user turns: at most USER_TURNS at once per user, the others queued in arrival order. */
export function createTurns() {
  const users = new Map<number, { running: number; queue: (() => void)[] }>();
  let peak = 0;
  let abandonedCount = 0;
  const release = (userId: number) => {
    const user = users.get(userId)!;
    const next = user.queue.shift();
    if (next) next(); // the turn passes straight on: a newcomer cannot overtake the queue
    else if (--user.running === 0) users.delete(userId);
  };
  return {
    /** Resolves with the turn's release (call once), or rejects when `gone` aborts first. */
    take(userId: number, gone?: AbortSignal): Promise<() => void> {
      const user = users.get(userId) ?? { running: 0, queue: [] };
      users.set(userId, user);
      let released = false;
      const once = () => {
        if (released) return;
        released = true;
        release(userId);
      };
      if (user.running < USER_TURNS) {
        user.running += 1;
        peak = Math.max(peak, user.running);
        return Promise.resolve(once);
      }
      return new Promise((resolve, reject) => {
        const granted = () => {
          gone?.removeEventListener('abort', left);
          resolve(once);
        };
        const left = () => {
          const at = user.queue.indexOf(granted);
          if (at !== -1) user.queue.splice(at, 1);
          abandonedCount += 1;
          reject(abandoned());
        };
        if (gone?.aborted) {
          abandonedCount += 1;
          return reject(abandoned());
        }
        gone?.addEventListener('abort', left, { once: true });
        user.queue.push(granted);
      });
    },
    stats: () => {
      let underWay = 0;
      let waiting = 0;
      for (const user of users.values()) {
        underWay += user.running;
        waiting += user.queue.length;
      }
      return { underWay, waiting, peakPerUser: peak, abandoned: abandonedCount };
    },
  };
}
