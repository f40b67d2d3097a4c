// Durable webhook inbox: concurrent callbacks are stored and processed together, in one transaction (group commit).
import type { MessagesRepo } from '../db/messages-repo';
import type { UsersRepo } from '../db/users-repo';
import type { WebhookEventsRepo } from '../db/webhook-events-repo';
import { parseJsonOrUndefined } from '../loose-json';
import { addNote, ingest, notesRecord, type IngestDeps, type IngestResult } from './ingest';

type LogFn = (details: object, message: string) => void;
export interface InboxLogger { debug: LogFn; warn: LogFn; error: LogFn }

export interface InboxDeps {
  events: WebhookEventsRepo;
  users: Pick<UsersRepo, 'findByPhoneNumberId'>;
  messages: Pick<MessagesRepo, 'insertInbound' | 'applyStatus'>;
  now: () => Date;
  log: InboxLogger;
}

interface Queued { receivedAt: number; rawBody: string; payload: unknown; resolve: (id: number) => void; reject: (error: unknown) => void }
interface Received { id: number; receivedAt: number; payload: unknown }

const REPLAY_PAGE = 200;

export function createInbox(deps: InboxDeps) {
  let queue: Queued[] = [];

  function ingestOne(event: Received, ingestDeps: IngestDeps): IngestResult {
    try {
      return ingest(event.payload, event.receivedAt, ingestDeps);
    } catch (error) {
      const result: IngestResult = { failed: true, notes: [], moreNotes: 0 };
      addNote(result, `event: ${error instanceof Error ? error.message : String(error)}`);
      return result;
    }
  }

  /**
   * Processes stored events, each in its own savepoint (call inside a transaction); returns how many failed.
   * An event whose outcome cannot be recorded is rolled back whole and stays pending for the next start-up.
   */
  function processEvents(events: readonly Received[]): number {
    const userIds = new Map<string, number | undefined>();
    const ingestDeps: IngestDeps = {
      userIdFor(phoneNumberId) {
        if (!userIds.has(phoneNumberId)) userIds.set(phoneNumberId, deps.users.findByPhoneNumberId(phoneNumberId)?.id);
        return userIds.get(phoneNumberId);
      },
      insertInbound: deps.messages.insertInbound,
      applyStatus: deps.messages.applyStatus,
      atomic: deps.events.atomic,
    };
    let failed = 0;
    for (const event of events) {
      try {
        deps.events.atomic(() => {
          const result = ingestOne(event, ingestDeps);
          deps.events.settle(event.id, result.failed ? 'failed' : 'processed', notesRecord(result), deps.now().getTime());
          if (result.failed) failed += 1;
          if (result.notes.length > 0) {
            deps.log.warn({ webhookEventId: event.id, notes: result.notes, moreNotes: result.moreNotes }, 'webhook event not fully applied');
          }
        });
      } catch (error) {
        failed += 1;
        deps.log.error({ err: error, webhookEventId: event.id }, 'webhook event outcome not recorded; it stays pending');
      }
    }
    return failed;
  }

  /** Group commit: the batch's raw events and their processing in one transaction, so one fsync, before any 200. */
  function flush(): void {
    const batch = queue;
    queue = [];
    let ids: number[];
    try {
      ids = deps.events.atomic(() => {
        const stored = deps.events.append(batch);
        processEvents(batch.map((queued, i) => ({ id: stored[i]!, receivedAt: queued.receivedAt, payload: queued.payload })));
        return stored;
      });
    } catch (error) {
      // Nothing of the batch is stored: every request fails, and the network delivers again.
      for (const queued of batch) queued.reject(error);
      return;
    }
    deps.log.debug({ events: batch.length }, 'webhook events committed');
    batch.forEach((queued, i) => queued.resolve(ids[i]!));
  }

  return {
    /** Resolves with the event id once the raw body is durably stored and processing has run. */
    accept(rawBody: string, payload: unknown): Promise<number> {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ receivedAt: deps.now().getTime(), rawBody, payload, resolve, reject });
      });
    },

    /** Processes every pending or failed event again, oldest first (at start-up). */
    replay(): { events: number; failed: number } {
      const totals = { events: 0, failed: 0 };
      for (let page = deps.events.unprocessed(0, REPLAY_PAGE); page.length > 0; page = deps.events.unprocessed(page.at(-1)!.id, REPLAY_PAGE)) {
        const events = page.map((event) => ({ id: event.id, receivedAt: event.receivedAt, payload: parseJsonOrUndefined(event.rawBody) }));
        totals.failed += deps.events.atomic(() => processEvents(events));
        totals.events += page.length;
      }
      return totals;
    },
  };
}
