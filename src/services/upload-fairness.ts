// Fair uploads: at most UPLOADS_PER_USER in flight per user, and a pace floor that stops an upload trickling below it
// (so no user holds upload connections with a few bytes a second, and one user's uploads never delay another's).
import type { Readable } from 'node:stream';
import { AppError } from '../errors';

export const UPLOADS_PER_USER = 2;
export const TOO_MANY_UPLOADS_RETRY_AFTER_S = 5;
/** The floor: at least `minBytesPerSecond` over every window of `windowMs` (tests shrink the window). */
export interface UploadPace { windowMs?: number; minBytesPerSecond?: number }
const WINDOW_MS = 10_000;
const MIN_BYTES_PER_SECOND = 16 * 1024;

/** Per-user turns: `enter` answers a release (call once), or throws 429 TOO_MANY_UPLOADS. */
export function createUploadTurns(perUser = UPLOADS_PER_USER) {
  const inFlight = new Map<number, number>();
  return {
    enter(userId: number): () => void {
      const running = inFlight.get(userId) ?? 0;
      if (running >= perUser) {
        throw new AppError(429, 'TOO_MANY_UPLOADS', `At most ${perUser} uploads at once per user; retry once one has finished`,
          undefined, { 'retry-after': String(TOO_MANY_UPLOADS_RETRY_AFTER_S) });
      }
      inFlight.set(userId, running + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const now = (inFlight.get(userId) ?? 1) - 1;
        if (now === 0) inFlight.delete(userId);
        else inFlight.set(userId, now);
      };
    },
    /** Uploads of this user in flight now. */
    inFlight: (userId: number): number => inFlight.get(userId) ?? 0,
  };
}
export type UploadTurns = ReturnType<typeof createUploadTurns>;
/** What the upload route is built with: the pace floor, and its turns (its own when not given). */
export interface UploadFairness { pace?: UploadPace; turns?: UploadTurns }

/**
 * The file's chunks, counted per window: a window that brought fewer than the floor's bytes destroys the stream with
 * 408 UPLOAD_TOO_SLOW (the upload to the network is then cut short too).
 */
export async function* paced(stream: Readable, pace: UploadPace = {}): AsyncGenerator<Buffer> {
  const windowMs = pace.windowMs ?? WINDOW_MS;
  const minBytesPerSecond = pace.minBytesPerSecond ?? MIN_BYTES_PER_SECOND;
  const floor = (minBytesPerSecond * windowMs) / 1000;
  let bytes = 0;
  const timer = setInterval(() => {
    if (bytes < floor) {
      stream.destroy(new AppError(408, 'UPLOAD_TOO_SLOW',
        `The upload sent less than ${minBytesPerSecond} bytes per second for ${windowMs / 1000} s and was stopped`));
    }
    bytes = 0;
  }, windowMs);
  timer.unref();
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      yield chunk;
    }
  } finally {
    clearInterval(timer);
  }
}
