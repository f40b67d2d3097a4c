// Application errors: every one becomes the SPEC §2 error shape with its machine `code`.
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Extra top-level fields of the error body (e.g. `upstream`). */
    readonly extra?: Record<string, unknown>,
    /** Response headers to set (e.g. `Retry-After`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const unauthorized = (message = 'Authentication required') => new AppError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'Your role may not do this') => new AppError(403, 'FORBIDDEN', message);
export const accountDisabled = () => new AppError(403, 'ACCOUNT_DISABLED', 'This account is disabled');
export const userNotFound = () => new AppError(404, 'USER_NOT_FOUND', 'User not found');
export const lastAdmin = () => new AppError(409, 'LAST_ADMIN', 'This is the last active administrator; make another user an active ADMIN first');

/** Seconds a client is told to wait when storage refuses writes: long enough for an operator's fix to matter. */
export const STORAGE_RETRY_AFTER_S = 10;

// SQLite result codes (extended codes share the prefix) that mean the store cannot take writes right now, and why.
const STORAGE_FAULTS: [code: string, reason: string][] = [
  ['SQLITE_FULL', 'the disk is full'],
  ['SQLITE_IOERR', 'the disk reports an I/O error'],
  ['SQLITE_READONLY', 'the database file is read-only'],
  ['SQLITE_CANTOPEN', 'the database file cannot be opened'],
  ['SQLITE_CORRUPT', 'the database file is damaged'],
  ['SQLITE_NOTADB', 'the database file is damaged'],
  ['SQLITE_BUSY', 'the database is locked by another process'],
  ['SQLITE_PROTOCOL', 'the database is locked by another process'],
];

/** Why storage refused, for a SQLite error that is a storage fault (not a bug or a constraint); undefined otherwise. */
export function storageFaultReason(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'SqliteError') return undefined;
  const code = String((error as { code?: unknown }).code ?? '');
  return STORAGE_FAULTS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`))?.[1];
}

/**
 * 503 STORAGE_UNAVAILABLE: nothing of the request was stored; retry later. The cause (a full disk, a SQLite code) is
 * the operator's business: it goes to the log, /readyz and /metrics, never to a client.
 */
export function storageUnavailable(): AppError {
  return new AppError(503, 'STORAGE_UNAVAILABLE', 'The gateway cannot store data right now; nothing was changed, retry later',
    undefined, { 'retry-after': String(STORAGE_RETRY_AFTER_S) });
}

/** The AppError a storage fault is answered with, or undefined when `error` is not one. Already mapped errors pass through. */
export function asStorageError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error.code === 'STORAGE_UNAVAILABLE' ? error : undefined;
  return storageFaultReason(error) === undefined ? undefined : storageUnavailable();
}
