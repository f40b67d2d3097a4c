// What the network clients (send, upload, media) share about undici: one deadline for every stage, and failure codes.

/** The same deadline for connecting, for the answer's headers and between body chunks (undici's defaults are minutes). */
export const deadlines = (timeoutMs: number) => ({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: timeoutMs } });

/** undici's own deadlines: the request was written, the network may have accepted it. */
export const TIMEOUTS: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A thrown error's code (undici's or Node's), for logs and records; UNKNOWN when it has none. */
export const errorCode = (error: unknown): string => (error as { code?: unknown })?.code?.toString() ?? 'UNKNOWN';
