// Per phone number id pacing: the network calls of one number never exceed its rate in any 1 s, synchronous sends and
// the queue worker alike, and hold that rate while calls wait. A call first reserves a slot (slots are spaced 1 s / rate
// apart, a hair wider), then, right before it goes out, checks the log of that number's last `rate` calls: it leaves at
// least 1 s after the call `rate` places before it reached the network. When did that call reach it? Before its answer
// came back, less the part of an answer time every call of the number has (the fastest answer of the log: the way back
// and the network's own work), give or take JITTER_MS: so the pace is kept on start times when answers are slow only
// because the network is far (a 100 ms round trip used to cost the number 10 % of its rate), and on answers when they
// are slow because a call took long to get there (a busy event loop, a new connection). A call not answered yet may
// still reach the network at any moment before its answer: the call `rate` places after it waits for that answer.
// Nothing runs while no one waits: no timer, no loop. The two halves live apart: slots (createPacer) on the main thread,
// where a synchronous send's 429 is decided; the log and the wait for room in the past second (createDepartures) on the
// network thread (network-thread.ts), which reads each answer as it comes.
import { setTimeout as wait } from 'node:timers/promises';
import { AppError } from '../errors';

const WINDOW_MS = 1000;
/** Slots a little wider than 1 s / rate, the allowance and a margin (see above): at most 1.4 % of the rate together
 * while answers take a steady time (80/s is held at 78.9/s or more). */
const SPREAD = 1.002;
const JITTER_MS = 12;
const MARGIN_MS = 2;

export interface PacerClock { now(): number; sleep(ms: number): Promise<unknown> }
const realClock: PacerClock = { now: () => performance.now(), sleep: (ms) => wait(ms, undefined, { ref: false }) };

/** `waiters`: calls waiting for this one's answer to know when it reached the network. */
interface Call { sent: number; done?: number; forgotten?: true; waiters?: (() => void)[] }
/** A call waiting to leave: `at` its slot; `wake` set while it waits for the calls of earlier slots to leave. */
interface Waiting { at: number; wake?: () => void }
/** `fastest`: the fastest answer time among the logged calls (Infinity: none answered yet), kept as answers come and
 * recomputed only when old calls leave the log (once per `rate` calls: no walk of the log per call). `waiting`: the
 * calls in `dispatch`, by slot (the first one is the next to leave). */
interface Departures { log: Call[]; fastest: number; waiting: Waiting[] }

function forget(l: Departures, count: number): void {
  for (const call of l.log.splice(0, count)) call.forgotten = true;
  l.fastest = Infinity;
  for (const call of l.log) if (call.done !== undefined) l.fastest = Math.min(l.fastest, call.done - call.sent);
}

/** Called when the call's answer (or failure) came back. */
export type Done = () => void;
/** A reserved turn: `at` is the slot of the first attempt; `retry` reserves one for a further attempt of the same send. */
export interface Turn { at: number; retry(): number }

/** One lane per phone number id, made on first use. */
function lanesOf<L>(make: () => L): (id: string) => L {
  const lanes = new Map<string, L>();
  return (id) => {
    let found = lanes.get(id);
    if (!found) lanes.set(id, found = make());
    return found;
  };
}

/** The slots: each number's next one, spaced 1 s / rate apart (a hair wider). */
export function createPacer(clock: PacerClock = realClock) {
  const lane = lanesOf(() => ({ next: 0 }));

  /** The next slot of `id` if it is at most `maxWaitMs` away (then it is taken); undefined otherwise. */
  function reserve(id: string, rate: number, maxWaitMs = Infinity): number | undefined {
    const l = lane(id);
    const now = clock.now();
    const at = Math.max(now, l.next);
    if (at - now > maxWaitMs) return undefined;
    l.next = at + (WINDOW_MS * SPREAD) / rate;
    return at;
  }

  return {
    reserve,
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
      return { at, retry: () => reserve(id, rate)! };
    },
  };
}
export type Pacer = ReturnType<typeof createPacer>;

/** The departures: each number's log of its last calls, and the wait of each call for its slot and for room. */
export function createDepartures(clock: PacerClock = realClock) {
  const lane = lanesOf((): Departures => ({ log: [], fastest: Infinity, waiting: [] }));

  /** Waits for slot `at`, then until the number's last `rate` calls leave room in the past second; records the call.
   * Calls of a number leave in the order of their slots: one waits while a call of an earlier slot has not left. */
  function dispatch(id: string, rate: number, at: number): Promise<Done> {
    const l = lane(id);
    const me: Waiting = { at };
    let place = l.waiting.length;
    while (place > 0 && l.waiting[place - 1]!.at > at) place--;
    l.waiting.splice(place, 0, me);
    return room(l, rate, me).finally(() => {
      l.waiting.splice(l.waiting.indexOf(me), 1);
      l.waiting[0]?.wake?.();
    });
  }

  async function room(l: Departures, rate: number, me: Waiting): Promise<Done> {
    const { at } = me;
    for (;;) {
      if (l.waiting[0] !== me) {
        await new Promise<void>((woken) => (me.wake = woken));
        me.wake = undefined;
        continue;
      }
      const now = clock.now();
      const earlier = l.log.length < rate ? undefined : l.log[l.log.length - rate]!;
      if (earlier !== undefined && earlier.done === undefined) {
        // Its arrival is unknown until it is answered (the network, or this process, may be stalled): wait for that.
        await new Promise<void>((answered) => (earlier.waiters ??= []).push(answered));
        continue;
      }
      const reached = earlier === undefined ? -Infinity : Math.max(earlier.sent, earlier.done! - Math.max(0, l.fastest - JITTER_MS));
      const due = Math.max(at, reached + WINDOW_MS + MARGIN_MS);
      if (due <= now) {
        const call: Call = { sent: now };
        l.log.push(call);
        if (l.log.length > 2 * rate) forget(l, l.log.length - rate);
        return () => {
          if (call.done !== undefined) return;
          call.done = clock.now();
          // A call forgotten meanwhile no longer counts (as the walk over the log it replaces).
          if (!call.forgotten) l.fastest = Math.min(l.fastest, call.done - call.sent);
          call.waiters?.forEach((answered) => answered());
        };
      }
      await clock.sleep(due - now);
    }
  }

  return { dispatch };
}
