// The gateway's Prometheus metrics: one prom-client registry per app (tests build many apps in one process), no Fastify.
import { statSync } from 'node:fs';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { StorageHealth, SyncStats } from '../db/writer';
import type { SendResult } from '../messaging/client';

export type EventState = 'processed' | 'failed' | 'dead';

/** What is read from the database at scrape time (cheap: one indexed count, one small sum). */
export interface MetricsSources {
  /** Stored callbacks not processed yet, by state (pending, failed, dead). */
  backlog: () => Record<string, number>;
  /** Credits used this calendar month, all users together. */
  creditsUsed: () => number;
  /** The SQLite file; `:memory:` has no size. */
  databasePath: string;
  /** Inbound media downloads since start (stored, failed for good, retried) and those under way. */
  mediaDownloads: () => { stored: number; failed: number; retried: number; active: number };
  /** Whether writes reach the disk, and why not. */
  storage: () => StorageHealth;
  /** The writer's syncs of the write-ahead log since start. */
  syncs?: () => SyncStats;
  /** Free bytes of the database's filesystem (Infinity for :memory:). */
  freeBytes: () => number;
  /** The event feed: events written since start, open streams, and each endpoint's lag (events after its cursor). */
  events?: () => { written: number; openStreams: number; lag: number[] };
  /** The send queue per phone number id: waiting messages, the oldest one's age (s) and paused-until (unix s; 0: not paused). */
  sendQueue: () => { phoneNumberId: string; depth: number; oldestAgeSeconds: number; pausedUntilSeconds: number }[];
  /** Node's process metrics (memory, CPU, event loop): the process turns them on, not every test app. */
  processMetrics?: boolean;
}

/** A network error code, or the reason the network did not answer; bounded so a label cannot grow without end. */
function networkCode(result: SendResult): string {
  switch (result.kind) {
    case 'accepted': return '';
    case 'unavailable': return result.reason;
    default: return /^[0-9]{1,9}$/.test(String(result.upstream.code)) ? String(result.upstream.code) : 'other';
  }
}

const fileBytes = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL file between checkpoints, or :memory:
  }
};

export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  if (sources.processMetrics) collectDefaultMetrics({ register: registry });

  const callbacksReceived = new Counter({ name: 'gateway_webhook_callbacks_received_total', help: 'Webhook callbacks stored in the inbox', registers });
  const eventsSettled = new Counter({
    name: 'gateway_webhook_events_total', help: 'Processing runs of stored callbacks, by the state they left the event in (processed, failed, dead)',
    labelNames: ['state'] as const, registers,
  });
  new Gauge({
    name: 'gateway_webhook_backlog', help: 'Stored callbacks not processed yet, by state (pending, failed: replayed in the background; dead: waiting for an administrator)',
    labelNames: ['state'] as const, registers,
    collect() {
      this.reset();
      const counts = sources.backlog();
      for (const state of ['pending', 'failed', 'dead']) this.set({ state }, counts[state] ?? 0);
    },
  });
  const sends = new Counter({
    name: 'gateway_sends_total', help: 'Send requests (send and send2) by outcome: accepted, replayed (idempotent repeat), or the error code answered',
    labelNames: ['outcome'] as const, registers,
  });
  const networkCalls = new Counter({
    name: 'gateway_network_calls_total', help: 'Calls to the messaging network by result, with its error code (or timeout, unreachable, bad_answer)',
    labelNames: ['result', 'code'] as const, registers,
  });
  const networkSeconds = new Histogram({
    name: 'gateway_network_call_duration_seconds', help: 'Duration of one call to the messaging network (each retry is a call)',
    labelNames: ['result'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30], registers,
  });
  new Gauge({
    name: 'gateway_credits_used', help: 'Credits used in the current calendar month (TIMEZONE), all users together', registers,
    collect() { this.set(sources.creditsUsed()); },
  });
  new Gauge({
    name: 'gateway_database_bytes', help: 'Size of the SQLite database file and of its write-ahead log', labelNames: ['file'] as const, registers,
    collect() {
      const memory = sources.databasePath === ':memory:';
      this.set({ file: 'database' }, memory ? 0 : fileBytes(sources.databasePath));
      this.set({ file: 'wal' }, memory ? 0 : fileBytes(`${sources.databasePath}-wal`));
    },
  });

  new Gauge({
    name: 'gateway_storage_free_bytes', help: "Free space of the database's filesystem, in bytes (readiness is STORAGE_LOW below STORAGE_MIN_FREE_MB)", registers,
    collect() { this.set(sources.freeBytes()); },
  });
  new Gauge({
    name: 'gateway_storage_writable', help: 'Whether storage takes writes (1) or writes fail for a storage fault (0; the fault by its SQLite code in gateway_storage_fault)', registers,
    collect() { this.set(sources.storage().ok ? 1 : 0); },
  });
  new Gauge({
    name: 'gateway_storage_fault', help: 'The storage fault writes fail with now, by SQLite code (e.g. SQLITE_FULL, SQLITE_READONLY); absent while writes succeed',
    labelNames: ['code'] as const, registers,
    collect() {
      this.reset();
      const health = sources.storage();
      if (!health.ok) this.set({ code: health.code }, 1);
    },
  });

  new Gauge({
    name: 'gateway_database_syncs', help: 'Syncs of the write-ahead log to disk since the process started: all, in_place (on the event loop), '
      + 'slow (10 ms or more; one on the thread pool is timed from hand-off to answer, an upper bound)',
    labelNames: ['kind'] as const, registers,
    collect() {
      const stats = sources.syncs?.();
      if (!stats) return;
      this.set({ kind: 'all' }, stats.syncs);
      this.set({ kind: 'in_place' }, stats.syncsInPlace);
      this.set({ kind: 'slow' }, stats.slowSyncs);
    },
  });
  new Gauge({
    name: 'gateway_database_sync_seconds', help: 'Time of the syncs of the write-ahead log since the process started, in seconds', registers,
    collect() {
      const stats = sources.syncs?.();
      if (stats) this.set(stats.syncMs / 1000);
    },
  });

  new Gauge({
    name: 'gateway_media_downloads', help: 'Inbound media downloads since the process started: stored, failed for good, retried; and active now',
    labelNames: ['outcome'] as const, registers,
    collect() {
      const stats = sources.mediaDownloads();
      for (const outcome of ['stored', 'failed', 'retried', 'active'] as const) this.set({ outcome }, stats[outcome]);
    },
  });

  const deliveries = new Counter({
    name: 'gateway_event_deliveries_total', help: 'Delivery attempts to event endpoints by outcome (delivered, retried, refused, parked, disabled)',
    labelNames: ['outcome'] as const, registers,
  });
  new Gauge({
    name: 'gateway_events', help: 'The event feed: events written since start (written), open streams (streams), endpoint lag summed and its maximum',
    labelNames: ['measure'] as const, registers,
    collect() {
      const stats = sources.events?.();
      if (!stats) return;
      this.set({ measure: 'written' }, stats.written);
      this.set({ measure: 'streams' }, stats.openStreams);
      this.set({ measure: 'lag_total' }, stats.lag.reduce((a, b) => a + b, 0));
      this.set({ measure: 'lag_max' }, Math.max(0, ...stats.lag));
    },
  });

  const queueGauge = (name: string, help: string, pick: (q: ReturnType<MetricsSources['sendQueue']>[number]) => number) => new Gauge({
    name, help, labelNames: ['phone_number_id'] as const, registers,
    collect() {
      this.reset();
      for (const q of sources.sendQueue()) this.set({ phone_number_id: q.phoneNumberId }, pick(q));
    },
  });
  queueGauge('gateway_send_queue_depth', 'Queued and scheduled messages waiting, per phone number id', (q) => q.depth);
  queueGauge('gateway_send_queue_oldest_age_seconds', 'Age of the oldest waiting message, per phone number id', (q) => q.oldestAgeSeconds);
  queueGauge('gateway_send_queue_paused_until_seconds', "Until when (unix seconds) a number's queue is paused by the network's throttling; 0 when not paused", (q) => q.pausedUntilSeconds);
  const throttled = new Counter({
    name: 'gateway_send_queue_throttled_total', help: 'Throttling answers to queued sends, per phone number id and code (130429: number paused; 131056: recipient held; 131048: number paused)',
    labelNames: ['phone_number_id', 'code'] as const, registers,
  });

  return {
    registry,
    deliveryOutcome: (outcome: string) => deliveries.inc({ outcome }),
    /** A queued send the network throttled (the message waits again). */
    queueThrottled: (phoneNumberId: string, code: string) => throttled.inc({ phone_number_id: phoneNumberId, code }),
    callbackReceived: () => callbacksReceived.inc(),
    eventSettled: (state: EventState) => eventsSettled.inc({ state }),
    sendOutcome: (outcome: string) => sends.inc({ outcome }),
    /** One call to the network and how long it took. */
    networkCall: (result: SendResult, seconds: number) => {
      networkCalls.inc({ result: result.kind, code: networkCode(result) });
      networkSeconds.observe({ result: result.kind }, seconds);
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
