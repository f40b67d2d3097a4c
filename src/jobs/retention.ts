// Retention sweep: at start-up and every hour, deletes aged rows in small batches (one write each, a turn of the
// event loop between them), so requests keep being served and no write holds the lock for long.
import { IDEMPOTENCY_KEY_TTL_MS } from '../db/idempotency-repo';
import type { RetentionRepo } from '../db/retention-repo';
import type { SessionsRepo } from '../db/sessions-repo';
import type { WebhookEventsRepo } from '../db/webhook-events-repo';
import type { Writer } from '../db/writer';
import { createPeriodicJob, nextTurn } from './periodic';

type LogFn = (details: object, message: string) => void;
export interface RetentionDeps {
  writer: Pick<Writer, 'write'>;
  retention: RetentionRepo;
  events: Pick<WebhookEventsRepo, 'deleteProcessedBefore'>;
  sessions: Pick<SessionsRepo, 'prune'>;
  now: () => Date;
  log: { info: LogFn; error: LogFn };
  /** Days kept; 0 keeps forever. */
  webhookEventsDays: number;
  messagesDays: number;
  /** The event log and its days kept (0 keeps forever). */
  eventLog?: { deleteBefore(before: number, limit: number): number; days: number };
  intervalMs?: number;
  /** The media archive: files of deleted messages go right after their write; orphans (deleted users) at each sweep. */
  media?: { remove(messageIds: readonly number[]): Promise<void>; sweepOrphans(): Promise<number> };
}

export interface SweepTotals {
  webhookEvents: number; messages: number; conversations: number; orphanStatuses: number; idempotencyKeys: number; revokedSessions: number;
  /** Files of deleted users (or left by a crash) removed by the orphan sweep. */
  mediaFiles?: number;
  /** Events of the feed older than RETENTION_EVENTS_DAYS. */
  events?: number;
}

const DAY_MS = 86_400_000;
const EVERY_HOUR = 3_600_000;
/** Rows per write: a few milliseconds of lock. */
export const BATCH = 500;
/** Conversations read per page of the messages walk (each one is an index lookup). */
const CONVERSATIONS_PAGE = 200;
/** A send answers within 2 × the timeout: a status still unmatched after a week never will be. */
const ORPHAN_TTL_MS = 7 * DAY_MS;


export function createRetentionSweep(deps: RetentionDeps) {
  /** Runs `step` (one batch, inside a write) until a batch comes back short; the rows it deleted. */
  async function drain(step: () => number): Promise<number> {
    let total = 0;
    for (;;) {
      await nextTurn();
      if (job.stopped()) return total;
      const deleted = await deps.writer.write(step);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  }

  /** Walks the conversations, collecting their aged messages, and deletes them BATCH at a time. */
  async function agedMessages(before: number, totals: SweepTotals): Promise<void> {
    let pending: number[] = [];
    const flush = async () => {
      const ids = pending;
      pending = [];
      const deleted = await deps.writer.write(() => deps.retention.deleteMessages(ids));
      await deps.media?.remove(ids);
      totals.messages += deleted.messages;
      totals.conversations += deleted.conversations;
      await nextTurn();
    };
    let afterId = 0;
    for (;;) {
      await nextTurn();
      if (job.stopped()) return;
      const page = deps.retention.conversationsAfter(afterId, CONVERSATIONS_PAGE);
      if (page.length === 0) break;
      for (const conversationId of page) {
        // A conversation with more than a batch of aged messages is read again after each flush.
        for (;;) {
          pending.push(...deps.retention.agedMessages(conversationId, before, BATCH - pending.length));
          if (pending.length < BATCH) break;
          await flush();
          if (job.stopped()) return;
        }
      }
      afterId = page.at(-1)!;
    }
    if (pending.length > 0) await flush();
  }

  async function sweep(): Promise<SweepTotals> {
    const totals: SweepTotals = { webhookEvents: 0, messages: 0, conversations: 0, orphanStatuses: 0, idempotencyKeys: 0, revokedSessions: 0 };
    const now = deps.now().getTime();
    try {
      if (deps.webhookEventsDays > 0) {
        const before = now - deps.webhookEventsDays * DAY_MS;
        totals.webhookEvents = await drain(() => deps.events.deleteProcessedBefore(before, BATCH));
      }
      if (deps.messagesDays > 0) await agedMessages(now - deps.messagesDays * DAY_MS, totals);
      totals.orphanStatuses = await drain(() => deps.retention.deleteOrphansBefore(now - ORPHAN_TTL_MS, BATCH));
      totals.idempotencyKeys = await drain(() => deps.retention.deleteKeysBefore(now - IDEMPOTENCY_KEY_TTL_MS, BATCH));
      totals.revokedSessions = await drain(() => deps.sessions.prune(now, BATCH));
      const log = deps.eventLog;
      if (log && log.days > 0) totals.events = await drain(() => log.deleteBefore(now - log.days * DAY_MS, BATCH));
      if (deps.media && !job.stopped()) totals.mediaFiles = await deps.media.sweepOrphans();
    } catch (error) {
      deps.log.error({ err: error, deleted: totals }, 'retention sweep interrupted; it runs again within the hour');
      return totals;
    }
    if (Object.values(totals).some((n) => n > 0)) deps.log.info({ deleted: totals }, 'retention sweep deleted aged data');
    return totals;
  }

  const job = createPeriodicJob(sweep, deps.intervalMs ?? EVERY_HOUR);
  return job;
}
export type RetentionSweep = ReturnType<typeof createRetentionSweep>;
