// Per phone number id pacing: the network calls of one number never exceed its rate in any 1 s, synchronous sends and
// the queue worker alike. A call first reserves a slot (slots are spaced 1 s / rate apart), then, right before it goes
// out, checks the sliding log of that number's last `rate` calls. Nothing runs while no one waits: no timer, no loop.
import { setTimeout as wait } from 'node:timers/promises';
import { AppError } from '../errors';

const WINDOW_MS = 1000;
/** Slots a little wider than 1 s / rate and a margin on the log: a few ms of jitter never puts rate + 1 calls in one second. */
const SPREAD = 1.004;
const MARGIN_MS = 3;

export interface PacerClock { now(): number; sleep(ms: number): Promise<unknown> }
const realClock: PacerClock = { now: () => performance.now(), sleep: (ms) => wait(ms, undefined, { ref: false }) };

interface Lane { next: number; log: number[] }

/** A reserved turn: `go` resolves when the call may leave; `retry` paces a further attempt of the same send. */
export interface Turn { go(): Promise<void>; retry(): Promise<void> }

export function createPacer(clock: PacerClock = realClock) {
  const lanes = new Map<string, Lane>();
  const lane = (id: string): Lane => {
    let found = lanes.get(id);
    if (!found) lanes.set(id, found = { next: 0, log: [] });
    return found;
  };

  /** The next slot of `id` if it is at most `maxWaitMs` away (then it is taken); undefined otherwise. */
  function reserve(id: string, rate: number, maxWaitMs = Infinity): number | undefined {
    const l = lane(id);
    const now = clock.now();
    const at = Math.max(now, l.next);
    if (at - now > maxWaitMs) return undefined;
    l.next = at + (WINDOW_MS * SPREAD) / rate;
    return at;
  }

  /** Waits for slot `at`, then until the number's last `rate` calls leave room in the past second; records the call. */
  async function dispatch(id: string, rate: number, at: number): Promise<void> {
    for (;;) {
      const l = lane(id);
      const now = clock.now();
      const bound = l.log.length < rate ? -Infinity : l.log[l.log.length - rate]! + WINDOW_MS + MARGIN_MS;
      const due = Math.max(at, bound);
      if (due <= now) {
        l.log.push(now);
        if (l.log.length > rate) l.log.splice(0, l.log.length - rate);
        return;
      }
      await clock.sleep(due - now);
    }
  }

  return {
    reserve,
    dispatch,
    /** Sleeps until the pacer's time `at` (a slot from `reserve`). */
    until: async (at: number): Promise<void> => {
      const ms = at - clock.now();
      if (ms > 0) await clock.sleep(ms);
    },

    /**
     * A synchronous send's turn: taken now if it comes within `maxWaitMs`, else 429 SEND_QUEUE_FULL (nothing reserved,
     * so nothing is charged or sent). `retry` paces the send's further attempts without a limit.
     */
    turn(id: string, rate: number, maxWaitMs: number): Turn {
      const at = reserve(id, rate, maxWaitMs);
      if (at === undefined) {
        const backlogMs = lane(id).next - clock.now() - maxWaitMs;
        const seconds = Math.max(1, Math.ceil(backlogMs / 1000));
        throw new AppError(429, 'SEND_QUEUE_FULL',
          `This phone number's sends are booked for more than ${Math.round(maxWaitMs / 1000)} s at its rate of ${rate} messages per second; `
          + `nothing was sent or charged: retry after ${seconds} s, or queue the message (Prefer: respond-async)`, undefined, { 'retry-after': String(seconds) });
      }
      return { go: () => dispatch(id, rate, at), retry: () => dispatch(id, rate, reserve(id, rate)!) };
    },
  };
}
export type Pacer = ReturnType<typeof createPacer>;
