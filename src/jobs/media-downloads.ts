// The inbound media archive's worker: polls the durable queue, downloads several files at a time in arrival order
// (never in a webhook request), keeps the archive under its cap and the disk above its floor, retries what may succeed
// later with growing jittered waits for up to 24 h, and stops cleanly: a download cut short by shutdown stays queued
// and starts over after the restart.
import type { MediaRepo } from '../db/media-repo';
import type { Writer } from '../db/writer';
import { fields, parseJsonOrUndefined, str } from '../support/loose-json';
import type { MediaFiles } from '../db/media-files';
import type { MediaClient } from '../messaging/media';

type LogFn = (details: object, message: string) => void;
export interface MediaDownloadsDeps {
  writer: Pick<Writer, 'write'>;
  repo: MediaRepo;
  client: Pick<MediaClient, 'fetchTo'>;
  files: MediaFiles;
  /** The user's messaging token in clear; undefined when it cannot be opened. */
  openToken(sealed: string, userId: number): string | undefined;
  now: () => Date;
  log: { info: LogFn; warn: LogFn; error: LogFn };
  concurrency?: number;
  pollMs?: number;
  /** The archive's bounds: its total size (unlimited when absent) and the free bytes its filesystem keeps. */
  room?: { maxBytes?: number; minFreeBytes: number; freeBytes: () => number };
}

/** First retry within seconds, then doubling up to an hour; given up 24 h after the first attempt. */
const RETRY_BASE_MS = 2_000;
const RETRY_MAX_MS = 3_600_000;
export const GIVE_UP_MS = 24 * 3_600_000;
const POLL_MS = 1_000;
const CONCURRENCY = 4;
/** While there is no room, waiting media is tried again this often. */
export const NO_SPACE_RETRY_MS = 60_000;

/** Equal jitter: the wait before attempt n + 1 lies between half and all of base × 2^(n-1) (capped). */
export function retryDelayMs(failures: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function createMediaDownloads(deps: MediaDownloadsDeps) {
  const concurrency = deps.concurrency ?? CONCURRENCY;
  const active = new Map<number, { controller: AbortController; done: Promise<void> }>();
  /** Bytes promised to downloads under way (their lookup's size), counted against the cap and the floor. */
  const reserved = new Map<number, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let downloads = { stored: 0, failed: 0, retried: 0, noSpace: 0 };

  /** Whether `size` more bytes fit under the archive's cap and above the disk's floor (0: is there room at all). */
  function fits(size: number): boolean {
    const room = deps.room;
    if (!room) return true;
    const promised = [...reserved.values()].reduce((a, b) => a + b, 0) + size;
    if (room.maxBytes !== undefined && deps.repo.storedBytes() + promised + (size === 0 ? 1 : 0) > room.maxBytes) return false;
    return room.freeBytes() - promised >= room.minFreeBytes;
  }

  async function noSpace(id: number): Promise<void> {
    downloads.noSpace += 1;
    const at = deps.now().getTime();
    await deps.writer.write(() => deps.repo.noSpace(id, at + NO_SPACE_RETRY_MS));
  }

  async function retryOrGiveUp(id: number, first: number | null, failures: number, detail: string, retryAfterMs = 0): Promise<void> {
    const at = deps.now().getTime();
    if (at - (first ?? at) >= GIVE_UP_MS) {
      downloads.failed += 1;
      deps.log.warn({ messageId: id, detail }, 'media download given up after 24 h of retries');
      await deps.writer.write(() => deps.repo.failed(id, 'unavailable', at));
      return;
    }
    downloads.retried += 1;
    await deps.writer.write(() => deps.repo.retryAt(id, at + Math.max(retryDelayMs(failures), retryAfterMs), at, detail));
  }

  async function download(job: ReturnType<MediaRepo['due']>[number], signal: AbortSignal): Promise<void> {
    const id = job.messageId;
    const media = fields(parseJsonOrUndefined(job.mediaJson ?? ''));
    const mediaId = str(media?.id);
    const token = job.sealedToken === null ? undefined : deps.openToken(job.sealedToken, job.userId);
    if (mediaId === null || token === undefined) {
      return retryOrGiveUp(id, job.firstAttemptAt, job.attempts + 1, mediaId === null ? 'no media id' : 'no usable messaging token');
    }
    if (!fits(0)) return noSpace(id);
    // A partial file left by a crash is overwritten from the start.
    await deps.files.removeFile(deps.files.partPath(id));
    const admit = (size: number): boolean => {
      if (!fits(size)) return false;
      reserved.set(id, size);
      return true;
    };
    const outcome = await deps.client.fetchTo({ mediaId, token, sha256: str(media?.sha256), signal, admit }, deps.files.partPath(id));
    if (outcome.kind === 'aborted') return;
    if (outcome.kind === 'no_space') return noSpace(id);
    const at = deps.now().getTime();
    if (outcome.kind === 'retry') return retryOrGiveUp(id, job.firstAttemptAt, job.attempts + 1, outcome.detail, outcome.retryAfterMs);
    if (outcome.kind === 'final') {
      downloads.failed += 1;
      deps.log.warn({ messageId: id, error: outcome.error, detail: outcome.detail }, 'media download refused; not retried');
      await deps.writer.write(() => deps.repo.failed(id, outcome.error, at));
      return;
    }
    await deps.files.keep(id);
    // The callback's type is the one listed; the lookup's stands in when the callback gave none.
    const mimeType = str(media?.mime_type) ?? outcome.mimeType;
    const kept = await deps.writer.write(() => deps.repo.stored(id, mimeType, outcome.size, at));
    // The message went meanwhile (retention, user deleted): its file goes too.
    if (!kept) await deps.files.remove([id]);
    else downloads.stored += 1;
  }

  function launch(job: ReturnType<MediaRepo['due']>[number]): void {
    const controller = new AbortController();
    const done = download(job, controller.signal)
      .catch((error: unknown) => deps.log.error({ err: error, messageId: job.messageId }, 'media download failed; it is tried again later'))
      .finally(() => {
        active.delete(job.messageId);
        reserved.delete(job.messageId);
        tick();
      });
    active.set(job.messageId, { controller, done });
  }

  /** Starts due downloads, oldest first, while slots are free. */
  function tick(): void {
    if (stopped || active.size >= concurrency) return;
    let due;
    try {
      due = deps.repo.due(deps.now().getTime(), concurrency + active.size);
    } catch (error) {
      deps.log.error({ err: error }, 'media download queue unreadable; tried again shortly');
      return;
    }
    for (const job of due) {
      if (active.size >= concurrency) break;
      if (active.has(job.messageId)) continue;
      launch(job);
    }
  }

  /** Deletes files no stored download accounts for (their message or user was deleted) and leftover partial files. */
  async function sweepOrphans(): Promise<number> {
    const { stored, parts } = deps.files.list();
    let removed = 0;
    for (let i = 0; i < stored.length; i += 500) {
      const chunk = stored.slice(i, i + 500).filter((id) => !active.has(id));
      const kept = deps.repo.storedAmong(chunk);
      const gone = chunk.filter((id) => !kept.has(id));
      await deps.files.remove(gone);
      removed += gone.length;
    }
    for (const part of parts) {
      if ([...active.keys()].some((id) => deps.files.partPath(id) === part)) continue;
      await deps.files.removeFile(part);
      removed += 1;
    }
    return removed;
  }

  return {
    sweepOrphans,
    /** Looks for due downloads now (also done every second). */
    tick,
    /** Downloads finished since start: stored, failed for good, attempts rescheduled, put off for lack of room. */
    stats: () => ({ ...downloads, active: active.size }),
    /** Polls the queue every second; the timer keeps no process alive. */
    start(): void {
      if (stopped || timer) return;
      downloads = { stored: 0, failed: 0, retried: 0, noSpace: 0 };
      timer = setInterval(tick, deps.pollMs ?? POLL_MS);
      timer.unref();
      setImmediate(tick);
    },
    /** No new download starts; the ones under way are aborted (they stay queued) and awaited. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      for (const { controller } of active.values()) controller.abort();
      await Promise.all([...active.values()].map((entry) => entry.done));
    },
  };
}
export type MediaDownloads = ReturnType<typeof createMediaDownloads>;
