// Durable webhook inbox: each callback is stored and processed in one write of the single writer (concurrent ones share
// a commit); failed events are processed again in small batches, at most MAX_ATTEMPTS times in all, then left dead.
import type { ContactResolver } from '../contacts/resolve';
import type { MessagesRepo } from '../db/messages-repo';
import type { UsersRepo } from '../db/users-repo';
import type { EventSummary, StoredEvent, WebhookEventsRepo } from '../db/webhook-events-repo';
import type { Writer } from '../db/writer';
import { storageFaultReason } from '../errors';
import { parseJsonOrUndefined } from '../support/loose-json';
import { addNote, ingest, notesRecord, type IngestDeps, type IngestResult } from './ingest';

type LogFn = (details: object, message: string) => void;
export interface InboxLogger { debug: LogFn; warn: LogFn; error: LogFn }

export interface InboxDeps {
  writer: Writer;
  events: WebhookEventsRepo;
  users: Pick<UsersRepo, 'findByPhoneNumberId'>;
  messages: Pick<MessagesRepo, 'insertInbound' | 'applyStatus' | 'insertEcho' | 'applyEdit' | 'applyRevoke'>;
  contacts: Pick<ContactResolver, 'resolve' | 'change' | 'linkByWamid'>;
  now: () => Date;
  log: InboxLogger;
  /** Told of each processing run's resulting state (metrics). */
  settled?: (state: 'processed' | 'failed' | 'dead') => void;
}

interface Received { id: number; receivedAt: number; payload: unknown }
export interface BatchOutcome { events: number; failed: number; dead: number }
export interface ReplayBatch extends BatchOutcome { lastId: number }

/** Processing runs an event gets in all (the first, in its request, included) before it is left dead. */
export const MAX_ATTEMPTS = 5;
// One replay batch: at most this many events, and it stops after this many bytes of raw callbacks (at least one event).
const REPLAY_EVENTS = 50;
const REPLAY_BYTES = 1024 * 1024;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createInbox(deps: InboxDeps) {
  function ingestOne(event: Omit<Received, 'id'>, ingestDeps: IngestDeps): IngestResult {
    try {
      return ingest(event.payload, event.receivedAt, ingestDeps);
    } catch (error) {
      if (storageFaultReason(error) !== undefined || ingestDeps.atomic === null) throw error;
      const result: IngestResult = { failed: true, notes: [], moreNotes: 0 };
      addNote(result, `event: ${message(error)}`);
      return result;
    }
  }

  function ingestDepsNow(): IngestDeps {
    const userIds = new Map<string, number | undefined>();
    return {
      userIdFor(phoneNumberId) {
        if (!userIds.has(phoneNumberId)) userIds.set(phoneNumberId, deps.users.findByPhoneNumberId(phoneNumberId)?.id);
        return userIds.get(phoneNumberId);
      },
      insertInbound: deps.messages.insertInbound,
      applyStatus: deps.messages.applyStatus,
      insertEcho: deps.messages.insertEcho,
      applyEdit: deps.messages.applyEdit,
      applyRevoke: deps.messages.applyRevoke,
      resolveContact: deps.contacts.resolve,
      changeIdentity: deps.contacts.change,
      linkBsuid: deps.contacts.linkByWamid,
      atomic: deps.events.atomic,
    };
  }

  // The callbacks of one writer batch run one after another in the same turn: they share one cache of users by phone
  // number id (one lookup per batch, as before), dropped once the turn ends so that a changed user is seen next time.
  // `unisolated`: the same, for the writer's first run of a batch, without a savepoint per item.
  let batchDeps: { isolated: IngestDeps; unisolated: IngestDeps } | undefined;
  function ingestDepsOfTurn(isolated: boolean): IngestDeps {
    if (!batchDeps) {
      const isolatedDeps = ingestDepsNow();
      batchDeps = { isolated: isolatedDeps, unisolated: { ...isolatedDeps, atomic: null } };
      queueMicrotask(() => { batchDeps = undefined; });
    }
    return isolated ? batchDeps.isolated : batchDeps.unisolated;
  }

  function logNotes(id: number, result: IngestResult): void {
    if (result.notes.length > 0) deps.log.warn({ webhookEventId: id, notes: result.notes, moreNotes: result.moreNotes }, 'webhook event not fully applied');
  }

  /** Records one attempt; logs the event's death. */
  function settle(id: number, failed: boolean, notes: string | null, outcome: BatchOutcome, userId?: number): void {
    const settled = deps.events.settle(id, failed, notes, deps.now().getTime(), MAX_ATTEMPTS, userId);
    if (settled && settled.state !== 'pending') deps.settled?.(settled.state);
    if (settled?.state === 'failed') outcome.failed += 1;
    if (settled?.state === 'dead') {
      outcome.dead += 1;
      deps.log.error({ webhookEventId: id, attempts: settled.attempts }, 'webhook event dead: processing failed too often; replay it after a fix');
    }
  }

  /**
   * Processes stored events, each in its own savepoint (call inside a transaction). An event whose outcome
   * cannot be recorded is rolled back whole; its attempt is still counted when that can be written.
   */
  function processEvents(events: readonly Received[], ingestDeps: IngestDeps): BatchOutcome {
    const outcome: BatchOutcome = { events: events.length, failed: 0, dead: 0 };
    for (const event of events) {
      try {
        deps.events.atomic(() => {
          const result = ingestOne(event, ingestDeps);
          settle(event.id, result.failed, notesRecord(result), outcome, result.userId);
          logNotes(event.id, result);
        });
      } catch (error) {
        deps.log.error({ err: error, webhookEventId: event.id }, 'webhook event outcome not recorded; it is processed again later');
        try {
          deps.events.atomic(() => settle(event.id, true, `event: outcome not recorded: ${message(error).slice(0, 300)}`, outcome));
        } catch {
          // The database takes no writes at all: the event stays pending, uncounted, for a later run.
        }
      }
    }
    return outcome;
  }

  const received = (event: StoredEvent): Received => ({ id: event.id, receivedAt: event.receivedAt, payload: parseJsonOrUndefined(event.rawBody) });

  return {
    /**
     * Resolves with the event id once the callback is processed and durably stored with that outcome, in one write:
     * when the row cannot be stored, nothing the processing did is kept either (the network retries). The write may run
     * twice (see `writeRerunnable`): what it tells the metrics and the log comes once it is stored.
     */
    async accept(rawBody: string, payload: unknown): Promise<number> {
      const receivedAt = deps.now().getTime();
      const { id, result } = await deps.writer.writeRerunnable((isolated) => {
        const result = ingestOne({ receivedAt, payload }, ingestDepsOfTurn(isolated));
        const id = deps.events.insertProcessed({
          receivedAt, rawBody, failed: result.failed, error: notesRecord(result), at: deps.now().getTime(), userId: result.userId,
        });
        return { id, result };
      });
      deps.settled?.(result.failed ? 'failed' : 'processed');
      logNotes(id, result);
      return id;
    },

    /**
     * Processes the next few pending or failed events after `afterId`, oldest first, in one write;
     * null when there are none. The caller yields to the event loop between batches.
     */
    async replayBatch(afterId: number): Promise<ReplayBatch | null> {
      const ids = deps.events.replayIds(afterId, REPLAY_EVENTS);
      if (ids.length === 0) return null;
      const ingestDeps = ingestDepsNow();
      return deps.writer.write(() => {
        const totals: ReplayBatch = { events: 0, failed: 0, dead: 0, lastId: afterId };
        let bytes = 0;
        for (const id of ids) {
          if (bytes >= REPLAY_BYTES) break;
          totals.lastId = id;
          const event = deps.events.byId(id);
          if (!event) continue;
          bytes += event.rawBody.length;
          const outcome = processEvents([received(event)], ingestDeps);
          totals.events += outcome.events;
          totals.failed += outcome.failed;
          totals.dead += outcome.dead;
        }
        return totals;
      });
    },

    /** Processes one event now, whatever its state (an administrator's replay after a fix); undefined when unknown. */
    async replayOne(id: number): Promise<EventSummary | undefined> {
      await deps.writer.write(() => {
        const event = deps.events.byId(id);
        if (event) processEvents([received(event)], ingestDepsNow());
      });
      return deps.events.summary(id);
    },
  };
}
export type Inbox = ReturnType<typeof createInbox>;
