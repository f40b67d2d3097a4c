// Delivers each user's events to its endpoints (Standard Webhooks): one batch in flight per endpoint, in order, one
// event when keeping up and up to 100 when behind. 2xx advances the cursor; timeouts, network errors, 408, 429 and
// 5xx are retried with backoff (5 s doubling to 1 h, ±20 %, Retry-After honoured); 410 disables; other 4xx go event by
// event and an event refused 3 times is parked; 72 h of failures disable the endpoint. State lives in the database,
// so a restart resumes from the cursor with the same webhook-id for the batch in flight (at least once).
import { randomBytes } from 'node:crypto';
import type { EndpointRow, EventEndpointsRepo, AttemptOutcome } from '../db/event-endpoints-repo';
import type { EventsRepo, StoredEvent } from '../db/events-repo';
import type { Writer } from '../db/writer';
import type { EndpointClient, PostResult } from '../events/endpoint-client';
import type { Notifier } from '../events/notifier';
import { webhookSignature } from '../events/webhook-signature';
import { isoUtc } from '../support/iso-utc';
import { eventJson } from '../views/event-json';

type LogFn = (details: object, message: string) => void;
export type DeliveryOutcome = 'delivered' | 'retried' | 'refused' | 'parked' | 'disabled';
export interface EventDeliveriesDeps {
  writer: Pick<Writer, 'write'>;
  endpoints: EventEndpointsRepo;
  events: Pick<EventsRepo, 'after' | 'lastSeq' | 'bySeq'>;
  client: Pick<EndpointClient, 'post'>;
  notifier: Notifier;
  openSecret(sealed: string): string | undefined;
  now: () => Date;
  /** 0 ≤ x < 1: the backoff's jitter (tests inject it). */
  random?: () => number;
  log: { warn: LogFn; error: LogFn };
  counted?: (outcome: DeliveryOutcome) => void;
  pollMs?: number;
}

export const MAX_BATCH = 100;
const BACKOFF_MIN_MS = 5_000;
const BACKOFF_MAX_MS = 3_600_000;
export const GIVE_UP_MS = 72 * 3_600_000;
const REFUSALS_TO_PARK = 3;
const CONCURRENCY = 8;

/** The wait before retry number `failures` (1, 2 …): 5 s doubling up to 1 h, ±20 %. */
export function backoffMs(failures: number, random: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.8 + 0.4 * random));
}
const retryable = (status: number) => status === 408 || status === 429 || status >= 500;
const typesOf = (endpoint: EndpointRow): string[] | undefined => (endpoint.typesJson === null ? undefined : JSON.parse(endpoint.typesJson) as string[]);
const newBatchId = () => `msg_${randomBytes(12).toString('base64url')}`;

export function createEventDeliveries(deps: EventDeliveriesDeps) {
  const random = deps.random ?? Math.random;
  const inFlight = new Map<number, Promise<void>>();
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let scheduled = false;

  /** Signs and posts `body`; the answer or failure. */
  function send(endpoint: EndpointRow, id: string, body: string): Promise<PostResult> | undefined {
    const secret = deps.openSecret(endpoint.secretSealed);
    if (secret === undefined) return undefined;
    const timestamp = Math.floor(deps.now().getTime() / 1000);
    return deps.client.post(endpoint.url, {
      'content-type': 'application/json', 'user-agent': 'messaging-gateway-events/1',
      'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secret, id, timestamp, body),
    }, body);
  }

  /** The columns a failed attempt sets: backoff, or disabled after 72 h of failures. */
  function failure(endpoint: EndpointRow, now: number, error: string, retryAfter: number | undefined): AttemptOutcome {
    const failingSince = endpoint.failingSince ?? now;
    const failures = endpoint.failures + 1;
    if (now - failingSince >= GIVE_UP_MS) {
      deps.counted?.('disabled');
      return { failures, failingSince, state: 'disabled', disabledReason: `failing for 72 h; last: ${error}` };
    }
    return { failures, failingSince, nextAttemptAt: now + Math.max(backoffMs(failures, random()), retryAfter ?? 0) };
  }

  async function attempt(endpoint: EndpointRow): Promise<void> {
    const types = typesOf(endpoint);
    let rows: StoredEvent[];
    if (endpoint.batchLast !== null) {
      const last = endpoint.batchLast;
      rows = deps.events.after(endpoint.userId, endpoint.cursor, MAX_BATCH, types).filter((row) => row.seq <= last);
    } else {
      rows = deps.events.after(endpoint.userId, endpoint.cursor, MAX_BATCH, types);
    }
    if (rows.length === 0) {
      // Nothing to send: events it does not want (or the batch's events swept by retention) are passed over.
      const upTo = endpoint.batchLast ?? deps.events.lastSeq(endpoint.userId);
      if (upTo > endpoint.cursor) await deps.writer.write(() => deps.endpoints.settle(endpoint.id, { cursor: upTo, batchId: null, batchLast: null }));
      return;
    }
    let batchId = endpoint.batchId;
    if (batchId === null || endpoint.batchLast === null) {
      batchId = newBatchId();
      const batchLast = rows.at(-1)!.seq;
      // Recorded before sending: after a crash the same batch goes again under the same webhook-id.
      await deps.writer.write(() => deps.endpoints.settle(endpoint.id, { batchId, batchLast }));
      endpoint = { ...endpoint, batchId, batchLast };
    }
    const body = `{"events":[${rows.map(eventJson).join(',')}]}`;
    const sending = send(endpoint, batchId, body);
    const now = () => deps.now().getTime();
    if (sending === undefined) {
      deps.counted?.('disabled');
      await deps.writer.write(() => deps.endpoints.settle(endpoint.id, { state: 'disabled', disabledReason: 'its secret cannot be decrypted with this key; set a new URL or delete it' }));
      return;
    }
    const result = await sending;
    const at = now();
    const last: AttemptOutcome = { lastAttemptAt: at, lastDurationMs: result.durationMs, lastStatus: result.kind === 'answered' ? result.status : null,
      lastError: result.kind === 'failed' ? result.error : result.status >= 300 ? `HTTP ${result.status}: ${result.excerpt.slice(0, 200)}` : null };
    const id = endpoint.id;
    const sent = batchId;
    // A replay, an edit or a deletion while the batch was out wins: its outcome is then dropped.
    const settle = (outcome: AttemptOutcome) => deps.writer.write(() => {
      if (deps.endpoints.byId(id)?.batchId === sent) deps.endpoints.settle(id, outcome);
    });
    if (result.kind === 'answered' && result.status >= 200 && result.status < 300) {
      deps.counted?.('delivered');
      await settle({ ...last, cursor: endpoint.batchLast!, batchId: null, batchLast: null, refusals: 0, failures: 0, failingSince: null, nextAttemptAt: 0 });
      return;
    }
    if (result.kind === 'answered' && result.status === 410) {
      deps.counted?.('disabled');
      await settle({ ...last, state: 'disabled', disabledReason: 'the endpoint answered 410 Gone' });
      return;
    }
    if (result.kind === 'failed' || retryable(result.status)) {
      deps.counted?.('retried');
      const retryAfter = result.kind === 'answered' ? result.retryAfterMs : undefined;
      await settle({ ...last, ...failure(endpoint, at, last.lastError!, retryAfter) });
      return;
    }
    // Another 4xx: the batch goes again event by event; a single event refused 3 times is parked.
    deps.counted?.('refused');
    if (rows.length > 1) {
      await settle({ ...last, batchId: newBatchId(), batchLast: rows[0]!.seq, refusals: 0, nextAttemptAt: 0 });
      return;
    }
    const refusals = endpoint.refusals + 1;
    if (refusals >= REFUSALS_TO_PARK) {
      deps.counted?.('parked');
      deps.log.warn({ endpointId: id, eventId: rows[0]!.seq, status: result.status }, 'event endpoint refused an event 3 times: parked');
      await deps.writer.write(() => {
        if (deps.endpoints.byId(id)?.batchId !== sent) return;
        deps.endpoints.settle(id, { ...last, failures: 0, failingSince: null });
        deps.endpoints.park(id, rows[0]!.seq, result.status, at);
      });
      return;
    }
    await settle({ ...last, refusals, ...failure(endpoint, at, last.lastError!, result.retryAfterMs) });
  }

  function launch(endpoint: EndpointRow): void {
    const run = attempt(endpoint)
      .catch((error: unknown) => deps.log.error({ err: error, endpointId: endpoint.id }, 'event delivery failed; tried again shortly'))
      .finally(() => {
        inFlight.delete(endpoint.id);
        schedule();
      });
    inFlight.set(endpoint.id, run);
  }

  /** Starts an attempt for every due endpoint with something to send (one in flight each). */
  function tick(): void {
    scheduled = false;
    if (stopped) return;
    let due: EndpointRow[];
    try {
      due = deps.endpoints.due(deps.now().getTime());
    } catch (error) {
      deps.log.error({ err: error }, 'event endpoints unreadable; tried again shortly');
      return;
    }
    for (const endpoint of due) {
      if (inFlight.size >= CONCURRENCY) return;
      if (inFlight.has(endpoint.id)) continue;
      if (endpoint.batchLast === null && deps.events.lastSeq(endpoint.userId) <= endpoint.cursor) continue;
      launch(endpoint);
    }
  }
  function schedule(): void {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(tick);
  }

  let unsubscribe = () => {};
  return {
    tick: schedule,
    /** Resolves once no attempt is under way (tests). */
    async idle(): Promise<void> {
      while (inFlight.size > 0 || scheduled) {
        await Promise.all([...inFlight.values()]);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    /** A `ping` event to the endpoint, outside the log; the answer or failure. */
    async ping(endpoint: EndpointRow): Promise<PostResult | undefined> {
      const body = `{"events":[{"id":0,"type":"ping","created_at":"${isoUtc(deps.now().getTime())}","data":{}}]}`;
      return send(endpoint, newBatchId(), body);
    },
    /** Sends one parked event again on its own; delivered (2xx) → no longer parked. */
    async retryParked(endpoint: EndpointRow, seq: number): Promise<PostResult | undefined> {
      const row = deps.events.bySeq(endpoint.userId, seq);
      if (!row) return undefined;
      const result = await send(endpoint, newBatchId(), `{"events":[${eventJson(row)}]}`);
      if (result?.kind === 'answered' && result.status >= 200 && result.status < 300) {
        await deps.writer.write(() => deps.endpoints.unpark(endpoint.id, seq));
      }
      return result;
    },
    start(): void {
      if (!stopped) return;
      stopped = false;
      unsubscribe = deps.notifier.subscribeAll(() => schedule());
      timer = setInterval(schedule, deps.pollMs ?? 1000);
      timer.unref();
      schedule();
    },
    async stop(): Promise<void> {
      stopped = true;
      unsubscribe();
      clearInterval(timer);
      await Promise.all([...inFlight.values()]);
    },
  };
}
export type EventDeliveries = ReturnType<typeof createEventDeliveries>;
