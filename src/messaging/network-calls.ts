// The main thread's side of the network thread (network-thread.ts): one thread per client, started by its first call,
// holding the process open only while a call is under way (or the client is closing).
import type { Worker } from 'node:worker_threads';
import { startThread } from '../support/thread';
import type { CallReply, CallRequest, NetworkThreadSettings, ThreadReply, ThreadRequest } from './network-protocol';

/** `onLeft`: told when the call leaves for the network (a paced call waits for its turn first). */
export type CallAsked = Omit<CallRequest, 'kind' | 'id'> & { onLeft?: () => void };

interface Pending { resolve: (reply: CallReply) => void; onLeft?: () => void }

export function createNetworkCalls(settings: NetworkThreadSettings) {
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let thread: Worker | undefined;
  let closed: Promise<void> | undefined;
  const failed = (id: number, code: string, message: string, answered: boolean): CallReply =>
    ({ id, ms: 0, deadlineMs: 0, failure: { code, message, timedOut: false, answered } });

  /** Every call under way ends as a failure: the thread that made it is gone (it may have reached the network). */
  function lost(reason: string): void {
    for (const [id, { resolve }] of pending) resolve(failed(id, 'UND_ERR_SOCKET', reason, true));
    pending.clear();
  }

  function start(): Worker {
    const started = startThread(__filename, 'network-thread', { workerData: settings, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    started.on('message', (reply: ThreadReply) => {
      const entry = pending.get(reply.id);
      if ('left' in reply) return entry?.onLeft?.();
      pending.delete(reply.id);
      if (pending.size === 0 && !closed) started.unref();
      entry?.resolve(reply);
    });
    started.on('error', (error) => lost(`the network thread failed: ${error.message}`));
    started.on('exit', () => {
      if (thread === started) thread = undefined;
      lost('the network thread stopped');
    });
    return started;
  }

  return {
    /** One attempt; never rejects. */
    call({ onLeft, ...asked }: CallAsked): Promise<CallReply> {
      const id = nextId++;
      // Certainly not sent (undici's own code for a closed pool: not retried).
      if (closed) return Promise.resolve(failed(id, 'UND_ERR_CLOSED', 'the messaging client is closed', false));
      thread ??= start();
      thread.ref();
      const request: ThreadRequest = { kind: 'call', id, ...asked, ...(asked.pace && onLeft ? { pace: { ...asked.pace, tellLeft: true } } : {}) };
      const reply = new Promise<CallReply>((resolve) => pending.set(id, { resolve, onLeft }));
      thread.postMessage(request);
      return reply;
    },
    /** Closes the connections once every call handed over is made and answered, and ends the thread. */
    close(): Promise<void> {
      closed ??= new Promise<void>((resolve) => {
        if (!thread) return resolve();
        thread.ref();
        thread.once('exit', () => resolve());
        thread.postMessage({ kind: 'close' } satisfies ThreadRequest);
      });
      return closed;
    },
  };
}
