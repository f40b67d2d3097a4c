// The main thread's side of the network thread (network-thread.ts): one thread per client, started by its first call,
// holding the process open only while a call is under way.
import type { Worker } from 'node:worker_threads';
import { startThread } from '../support/thread';
import type { CallReply, CallRequest, NetworkThreadSettings, ThreadRequest } from './network-protocol';

export type CallAsked = Omit<CallRequest, 'kind' | 'id'>;

export function createNetworkCalls(settings: NetworkThreadSettings) {
  const pending = new Map<number, (reply: CallReply) => void>();
  let nextId = 0;
  let thread: Worker | undefined;
  let closed: Promise<void> | undefined;

  /** Every call under way ends as a failure: the thread that made it is gone (it may have reached the network). */
  function lost(reason: string): void {
    for (const [id, resolve] of pending) resolve({ id, ms: 0, failure: { code: 'UND_ERR_SOCKET', message: reason, timedOut: false, answered: true } });
    pending.clear();
  }

  function start(): Worker {
    const started = startThread(__filename, 'network-thread', { workerData: settings, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    started.on('message', (reply: CallReply) => {
      const resolve = pending.get(reply.id);
      pending.delete(reply.id);
      if (pending.size === 0) started.unref();
      resolve?.(reply);
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
    call(asked: CallAsked): Promise<CallReply> {
      const id = nextId++;
      if (closed) return Promise.resolve({ id, ms: 0, failure: { code: 'ECONNREFUSED', message: 'the messaging client is closed', timedOut: false, answered: false } });
      thread ??= start();
      thread.ref();
      const reply = new Promise<CallReply>((resolve) => pending.set(id, resolve));
      thread.postMessage({ kind: 'call', id, ...asked } satisfies ThreadRequest);
      return reply;
    },
    /** Closes the connections once the calls under way are answered, and ends the thread. */
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
