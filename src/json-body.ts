// Parses a request body as JSON, refusing prototype-poisoning keys; anything else is a 400.
import secureJson from 'secure-json-parse';
import { AppError } from './errors';

export function parseJsonBody(text: string): unknown {
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new AppError(400, 'INVALID_JSON', 'Request body is not valid JSON');
  }
}
