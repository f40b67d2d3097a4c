// Lenient readers of the network's JSON, as received or as stored: typed picks, and errors as {code, title, details}.
import type { ErrorInfo } from '../../schemas/conversations';

type Fields = Record<string, unknown>;

/** The value as an object with named fields; undefined for anything else (arrays and null included). */
export const fields = (value: unknown): Fields | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;

/** A non-empty string (a finite number as its digits), else null. */
export const str = (value: unknown): string | null => {
  if (typeof value === 'string') return value === '' ? null : value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
};

/** A finite number (also written as a string), else null. */
export const num = (value: unknown): number | null => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/**
 * An error in any shape the network or the gateway gives it — an `errors` array, an `{error: {…}}` envelope,
 * one error object, `{code, title, details}` — or plain text; null when there is none.
 */
export function errorInfo(value: unknown): ErrorInfo | null {
  let error = Array.isArray(value) ? value[0] : value;
  const errors = fields(error)?.errors;
  if (Array.isArray(errors)) error = errors[0];
  error = fields(fields(error)?.error) ?? error;
  if (error === undefined || error === null) return null;
  const found = fields(error);
  if (!found) return { code: null, title: str(error), details: null };
  const code = typeof found.code === 'number' && Number.isInteger(found.code) ? found.code : str(found.code);
  const title = str(found.title) ?? str(found.message) ?? str(found.error_user_title);
  const details = str(fields(found.error_data)?.details) ?? str(found.details) ?? str(found.error_user_msg)
    ?? (str(found.message) !== title ? str(found.message) : null);
  return { code, title, details };
}

/** JSON text as a value, or undefined when it is not JSON (the caller decides what that means). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
