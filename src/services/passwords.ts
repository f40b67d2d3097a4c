// Password hashing with argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane): about 55 ms a hash
// on a 2-core box, where the package default (64 MiB, 3 passes, 4 lanes) costs about 180 ms.
import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import { AppError } from '../errors';
import { createSemaphore } from '../support/semaphore';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

/** Unbounded hashing, for start-up, the CLI, seeding and tests; requests use a PasswordHasher. */
export const hashPassword = (password: string): Promise<string> => argon2.hash(password, OPTIONS);

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// Verified against when the e-mail is unknown, so both failures cost the same time.
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword('not-a-real-password-' + Math.random());
  return dummyHash;
}

export interface HashSlots {
  /** Hashes computed at once; default 2 × the cores Node may use. */
  slots?: number;
  /** How long a hash waits for a slot before the request is answered 503 BUSY; default 2 s. */
  waitMs?: number;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

export const BUSY_RETRY_AFTER_SECONDS = 2;
export const busy = () => new AppError(503, 'BUSY', 'The server is busy checking passwords; retry in a moment', undefined,
  { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) });

/**
 * Hashing and verification bounded to a few at once: argon2 runs on libuv's thread pool, which file
 * and DNS work share, so a login flood would otherwise slow every other request. Beyond the bound a
 * hash waits for a slot, and past the wait it throws 503 BUSY.
 */
export function createPasswordHasher({ slots = 2 * availableParallelism(), waitMs = 2000 }: HashSlots = {}): PasswordHasher {
  const semaphore = createSemaphore(Math.max(1, slots));
  async function bounded<T>(work: () => Promise<T>): Promise<T> {
    const release = await semaphore.acquire(waitMs);
    if (!release) throw busy();
    try {
      return await work();
    } finally {
      release();
    }
  }
  return {
    hash: (password) => bounded(() => hashPassword(password)),
    verify: (hash, password) => bounded(() => verifyPassword(hash, password)),
  };
}
