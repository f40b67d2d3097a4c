// What the main thread and the network thread (network-thread.ts) say to each other.

export interface NetworkThreadSettings { origin: string; connections: number; timeoutMs: number; maxAnswerBytes: number }

/** One attempt of a call to the network. `pace`: the number's turn; `at` is a slot of the main thread's pacer on the
 * wall clock both threads share (performance.timeOrigin + its performance.now()). */
export interface CallRequest {
  kind: 'call'; id: number; path: string; token: string; payload: string; deadlineMs: number;
  pace?: { lane: string; rate: number; at: number };
}
export type ThreadRequest = CallRequest | { kind: 'close' };

/** The network's answer, or why there was none (the error's code and message, its cause's message). `ms`: the call's
 * own time, its wait for its turn not included. */
export type CallReply = { id: number; ms: number } & (
  | { status: number; retryAfter: string | string[] | undefined; text: string }
  | { failure: { code: string; message: string; timedOut: boolean; answered: boolean } }
);
