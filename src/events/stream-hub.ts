// The live streams of the event log (server-sent events), without HTTP: each stream is a writer the route hands over.
// A stream catches up from its cursor in pages (waiting for the socket to drain), then gets new events when the
// notifier says its user has some. One that does not read is cut off once its unsent bytes pass a bound.
import type { EventsRepo } from '../db/events-repo';
import { eventJson } from '../views/event-json';
import type { Notifier } from './notifier';

/** What a stream needs from its connection. */
export interface StreamSink {
  /** Writes; false when the connection's buffer is over its mark (wait for `onDrain`). */
  write(chunk: string): boolean;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  onDrain(listener: () => void): void;
  /** Ends the response (`slow`: the client is cut off, it resumes by id). */
  close(reason: 'slow' | 'revoked' | 'shutdown'): void;
}

/** Who opened a stream: checked again when a session, key or user changes. */
export interface StreamCredential { callerId: number; jti?: string; keyId?: number; ver?: number }

export interface StreamHubOptions {
  events: Pick<EventsRepo, 'after'>;
  notifier: Notifier;
  /** Whether the credential still holds (user active, session not ended, key not revoked). */
  stillValid(credential: StreamCredential): boolean;
  maxPerUser: number;
  maxBufferedBytes: number;
  heartbeatMs: number;
}

interface Stream {
  userId: number; cursor: number; types: string[] | undefined; credential: StreamCredential; sink: StreamSink;
  pumping: boolean; again: boolean; closed: boolean; unsubscribe: () => void;
  /** Heartbeats seen while waiting for a drain: two in a row and the client is not reading. */
  stalled: number; waiting: boolean;
}

const PAGE = 100;

/** One event as its SSE frame. */
export const sseFrame = (seq: number, type: string, json: string): string => `id: ${seq}\nevent: ${type}\ndata: ${json}\n\n`;

export function createStreamHub(options: StreamHubOptions) {
  const streams = new Set<Stream>();
  let cutOff = 0;

  function close(stream: Stream, reason: 'slow' | 'revoked' | 'shutdown'): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.unsubscribe();
    streams.delete(stream);
    if (reason === 'slow') cutOff += 1;
    stream.sink.close(reason);
  }

  async function pump(stream: Stream): Promise<void> {
    if (stream.pumping) {
      stream.again = true;
      return;
    }
    stream.pumping = true;
    try {
      for (;;) {
        stream.again = false;
        if (stream.closed) return;
        const rows = options.events.after(stream.userId, stream.cursor, PAGE, stream.types);
        if (rows.length === 0) {
          if (stream.again) continue;
          return;
        }
        let open = true;
        for (const row of rows) {
          open = stream.sink.write(sseFrame(row.seq, row.type, eventJson(row)));
          stream.cursor = row.seq;
        }
        if (stream.sink.buffered() > options.maxBufferedBytes) return close(stream, 'slow');
        // A backlog is sent page by page as the client takes it; live events go out at once.
        if (!open && rows.length === PAGE) {
          stream.waiting = true;
          await new Promise<void>((resolve) => stream.sink.onDrain(resolve));
          stream.waiting = false;
          stream.stalled = 0;
        }
      }
    } finally {
      stream.pumping = false;
    }
  }

  const heartbeat = setInterval(() => {
    for (const stream of streams) {
      if (!options.stillValid(stream.credential)) {
        close(stream, 'revoked');
        continue;
      }
      if (stream.waiting && ++stream.stalled >= 2) {
        close(stream, 'slow');
        continue;
      }
      stream.sink.write(': keep-alive\n\n');
      if (stream.sink.buffered() > options.maxBufferedBytes) close(stream, 'slow');
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  return {
    /** Opens a stream after `cursor`; false when the user already has the most streams allowed. */
    open(userId: number, cursor: number, types: string[] | undefined, credential: StreamCredential, sink: StreamSink): (() => void) | false {
      if ([...streams].filter((s) => s.userId === userId).length >= options.maxPerUser) return false;
      const stream: Stream = {
        userId, cursor, types, credential, sink, pumping: false, again: false, closed: false, unsubscribe: () => undefined, stalled: 0, waiting: false,
      };
      streams.add(stream);
      const run = () => void pump(stream).catch(() => close(stream, 'shutdown'));
      stream.unsubscribe = options.notifier.subscribe(userId, run);
      // After the caller wrote the response head.
      setImmediate(run);
      // The connection went away.
      return () => {
        if (stream.closed) return;
        stream.closed = true;
        stream.unsubscribe();
        streams.delete(stream);
      };
    },
    /** Checks again every stream opened by or for this user (after a logout, a key revocation, a user change). */
    recheck(userId: number): void {
      for (const stream of [...streams]) {
        if ((stream.userId === userId || stream.credential.callerId === userId) && !options.stillValid(stream.credential)) close(stream, 'revoked');
      }
    },
    /** Open streams, and those cut off as slow since start. */
    stats: () => ({ open: streams.size, cutOff }),
    /** Ends every stream (shutdown). */
    stop(): void {
      clearInterval(heartbeat);
      for (const stream of [...streams]) close(stream, 'shutdown');
    },
  };
}
export type StreamHub = ReturnType<typeof createStreamHub>;
