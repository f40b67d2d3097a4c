import t from 'tap';
import { createDepartures, createPacer, type PacerClock } from '../src/messaging/pacer';

/** A clock that only moves when every caller sleeps: the pacer's timing decided by counts, not by the machine. */
function virtualClock() {
  let now = 0;
  const sleepers: { at: number; wake: () => void }[] = [];
  const clock: PacerClock = {
    now: () => now,
    sleep: (ms) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
  };
  /** Moves to the earliest sleeper's time and wakes it (false: nobody sleeps). */
  const step = async (): Promise<boolean> => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    if (sleepers.length === 0) return false;
    sleepers.sort((a, b) => a.at - b.at);
    const next = sleepers.shift()!;
    now = Math.max(now, next.at);
    next.wake();
    return true;
  };
  return { clock, step, set: (ms: number) => { now = ms; } };
}

/** The most starts in any 1 s window. */
function busiest(times: number[]): number {
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + 1000) j++;
    max = Math.max(max, j - i);
  }
  return max;
}

/** `count` calls at `rate`, each answered `answerMs` after it left; their start times. */
async function paced(rate: number, count: number, answerMs: number | ((i: number) => number)): Promise<number[]> {
  const v = virtualClock();
  const pacer = createPacer(v.clock);
  const departures = createDepartures(v.clock);
  const starts: number[] = [];
  const all = Array.from({ length: count }, async (_, i) => {
    const turn = pacer.turn('n', rate, Infinity);
    const done = await departures.dispatch('n', rate, turn.at);
    const sent = v.clock.now();
    starts.push(sent);
    await v.clock.sleep(typeof answerMs === 'number' ? answerMs : answerMs(i));
    done();
  });
  let settled = false;
  const finished = Promise.all(all).then(() => { settled = true; });
  while (!settled && await v.step()) { /* the virtual time runs */ }
  await finished;
  return starts;
}

t.test('the pace is kept on start times: slow answers do not lower the rate, and no 1 s window holds more than it', async (t) => {
  for (const answerMs of [1, 30, 250]) {
    const starts = await paced(80, 800, answerMs);
    t.equal(starts.length, 800);
    t.equal(busiest(starts), 80, `never more than 80 starts in 1 s (answers after ${answerMs} ms)`);
    const rate = ((starts.length - 1) * 1000) / (starts.at(-1)! - starts[0]!);
    t.ok(rate >= 80 * 0.98 && rate <= 80, `within 2 % of 80/s with answers after ${answerMs} ms (${rate.toFixed(2)}/s)`);
  }
});

t.test('an answer back sooner than the allowance lets the next window open from the answer', async (t) => {
  const starts = await paced(5, 20, 1);
  t.equal(busiest(starts), 5);
  t.same(starts.slice(0, 6).map((s) => Math.round(s)), [0, 200, 401, 601, 802, 1003], 'the 6th leaves 1 s + 2 ms after the 1st was answered');
});

t.test('a call not answered yet when its window would end holds the next call until its answer: it may still be on its way', async (t) => {
  const starts = await paced(5, 10, (i) => (i === 0 ? 1500 : 1));
  t.equal(busiest(starts), 5);
  // It may have reached the network just before its answer (1,500 ms): the 6th leaves 1 s + 2 ms after that, not
  // 1 s after the 1st left (when the 1st could still arrive in the same second).
  t.same(starts.slice(0, 6).map((s) => Math.round(s)), [0, 200, 401, 601, 802, 2502]);
});

t.test('a call answered much later than the number’s fastest answer is taken to have arrived late: the window waits for it', async (t) => {
  const starts = await paced(5, 10, (i) => (i === 0 ? 300 : 1));
  t.equal(busiest(starts), 5);
  t.same(starts.slice(0, 6).map((s) => Math.round(s)), [0, 200, 401, 601, 802, 1302], 'the 6th leaves 1 s + 2 ms after the 1st was answered (300 ms): the fastest answer (1 ms) is within the allowance, nothing is taken off');
});

t.test('calls of a number leave in the order of their slots, whatever the order they were handed over in', async (t) => {
  const v = virtualClock();
  const departures = createDepartures(v.clock);
  const left: string[] = [];
  const go = (name: string, at: number) => departures.dispatch('n', 5, at).then((done) => {
    left.push(`${name}@${v.clock.now()}`);
    done();
  });
  // A synchronous send hands its call over at once with a later slot; a queued one, at its earlier slot.
  const calls = [go('later slot', 400), go('earlier slot', 200)];
  while (await v.step()) { /* the virtual time runs */ }
  await Promise.all(calls);
  t.same(left, ['earlier slot@200', 'later slot@400'], 'each at its own slot, the earlier first');
});
