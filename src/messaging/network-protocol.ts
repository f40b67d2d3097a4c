// What the main thread and the network thread (network-thread.ts) say to each other.

export interface NetworkThreadSettings { origin: string; connections: number; timeoutMs: number; maxAnswerBytes: number }

/** One attempt of a call to the network. `pace`: the number's turn; `at` is a slot of the main thread's pacer on the
 * wall clock both threads share (performance.timeOrigin + its performance.now()); with `tellLeft` the thread says when
 * the call left. `budgetMs`: what is left of the send's time; the attempt's deadline is the timeout or, when less,
 * that budget less the wait for its turn. */
export interface CallRequest {
  kind: 'call'; id: number; path: string; token: string; payload: string; budgetMs: number;
  pace?: { lane: string; rate: number; at: number; tellLeft?: boolean };
}
export type ThreadRequest = CallRequest | { kind: 'close' };

/** The network's answer, or why there was none (the error's code and message, its cause's message). `ms`: the call's
 * own time, its wait for its turn not included. */
export type CallReply = { id: number; ms: number; deadlineMs: number } & (
  | { status: number; retryAfter: string | string[] | undefined; text: string }
  | { failure: { code: string; message: string; timedOut: boolean; answered: boolean } }
);
/** What the thread posts: a call's answer, or that a call asking for it has left. */
export type ThreadReply = CallReply | { id: number; left: true };
