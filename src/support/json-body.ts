// Parses a request body as JSON, refusing prototype-poisoning keys; anything else is a 400.
import secureJson from 'secure-json-parse';
import { AppError } from '../errors';

export function parseJsonBody(text: string): unknown {
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new AppError(400, 'INVALID_JSON', 'Request body is not valid JSON');
  }
}

/**
 * No body at all: 0 bytes, or only JSON's own whitespace (space, tab, CR, LF). `String.prototype.trim` would also
 * drop \v, \f, NBSP and a BOM, which JSON does not allow: such a body is invalid JSON, not an absent one.
 */
export function isEmptyJson(text: string): boolean {
  return /^[ \t\r\n]*$/.test(text);
}
