// The thread that makes the calls to the network's /messages (sends and marks read), and paces them. A paced call
// leaves at its slot once the number's last `rate` calls leave room in the past second, which the pacer knows from
// when each call left and when its answer came back (see pacer.ts). Here both times are read by an event loop that
// does nothing else: on the main thread, busy with callbacks and listings, an answer was read late, dated late, and
// held the number's next calls back with it (80/s measured 77.9–78.7/s at the network under load).
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { deadlines, errorCode } from './failures';
import type { CallReply, CallRequest, NetworkThreadSettings, ThreadReply, ThreadRequest } from './network-protocol';
import { createDepartures, type Done } from './pacer';

const port = parentPort!;
const settings = workerData as NetworkThreadSettings;
const pool = new Pool(settings.origin, {
  connections: settings.connections,
  keepAliveTimeout: 10_000,
  ...deadlines(settings.timeoutMs),
  maxResponseSize: settings.maxAnswerBytes,
});
const departures = createDepartures();
const text = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function call(request: CallRequest): Promise<CallReply> {
  const handedAt = performance.now();
  let answered: Done | undefined;
  if (request.pace) {
    const { lane, rate, at, tellLeft } = request.pace;
    answered = await departures.dispatch(lane, rate, at - performance.timeOrigin);
    if (tellLeft) port.postMessage({ id: request.id, left: true } satisfies ThreadReply);
  }
  const startedAt = performance.now();
  const ms = () => performance.now() - startedAt;
  // As before the thread: the wait for a turn comes out of the send's budget (a deadline already past aborts at once).
  const deadlineMs = Math.max(1, Math.round(Math.min(settings.timeoutMs, request.budgetMs - (startedAt - handedAt))));
  const controller = new AbortController();
  let timedOut = false;
  let headers = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, deadlineMs);
  try {
    const answer = await pool.request({
      method: 'POST', path: request.path, body: request.payload, signal: controller.signal,
      headers: { authorization: `Bearer ${request.token}`, 'content-type': 'application/json', accept: 'application/json' },
    });
    headers = true;
    answered?.();
    // Always read the body to its end (or fail reading it): an unread body stalls the connection.
    const body = await answer.body.text();
    return { id: request.id, ms: ms(), deadlineMs, status: answer.statusCode, retryAfter: answer.headers['retry-after'], text: body };
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? ` (cause: ${text(error.cause)})` : '';
    return { id: request.id, ms: ms(), deadlineMs, failure: { code: errorCode(error), message: `${text(error)}${cause}`, timedOut, answered: headers } };
  } finally {
    clearTimeout(timer);
    // Told in every case: the pacer holds the number's later calls until this one is answered.
    answered?.();
  }
}

/** Calls handed over and not answered yet (waiting for their turn included). */
const underWay = new Set<Promise<void>>();

port.on('message', (request: ThreadRequest) => {
  if (request.kind === 'close') {
    // Every call handed over is made and answered first; then nothing is left to keep the thread alive: it ends, and
    // the main thread sees it exit.
    void Promise.allSettled(underWay).then(() => pool.close()).finally(() => port.close());
    return;
  }
  const answering = call(request).then((reply) => port.postMessage(reply satisfies ThreadReply)).finally(() => underWay.delete(answering));
  underWay.add(answering);
});
