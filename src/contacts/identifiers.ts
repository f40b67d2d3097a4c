// Who a payload names: a phone number and/or a business-scoped user id (BSUID), read from the network's fields.
// An empty string is absent; a BSUID found where a number used to be (`from`, `wa_id`) is a BSUID, never a number.
import { BSUID_PATTERN } from '../../schemas/network';
import { fields, str } from '../support/loose-json';

const BSUID = new RegExp(BSUID_PATTERN);
const PHONE = /^[0-9]{1,20}$/;

export const isBsuid = (value: string): boolean => BSUID.test(value);
export const isPhone = (value: string): boolean => PHONE.test(value);

/** The identifiers and profile a payload gives for one person. */
export interface Identifiers {
  waId: string | null; bsuid: string | null; parentBsuid: string | null;
  name: string | null; username: string | null;
  /** Values that were neither a number nor a BSUID where one was expected, as `field: value` notes. */
  malformed: string[];
}

export const noIdentifiers = (): Identifiers => ({ waId: null, bsuid: null, parentBsuid: null, name: null, username: null, malformed: [] });

/** Reads a number-or-BSUID field (`from`, `wa_id`, `recipient_id`) into `ids`. */
function readAddress(ids: Identifiers, field: string, value: unknown): void {
  const text = str(value);
  if (text === null) return;
  if (isBsuid(text)) ids.bsuid ??= text;
  else if (isPhone(text)) ids.waId ??= text;
  else ids.malformed.push(`${field} ${JSON.stringify(text.slice(0, 80))} is neither a phone number nor a user id`);
}

/** Reads a BSUID field (`user_id`, `from_user_id` …) into `ids` (the parent when `parent`). */
function readBsuid(ids: Identifiers, field: string, value: unknown, parent = false): void {
  const text = str(value);
  if (text === null) return;
  if (!isBsuid(text)) {
    ids.malformed.push(`${field} ${JSON.stringify(text.slice(0, 80))} is not a user id; ignored`);
    return;
  }
  if (parent) ids.parentBsuid ??= text;
  else ids.bsuid ??= text;
}

/** The sender of an inbound message: `from`, else `from_user_id` (and `from_parent_user_id`). */
export function senderOf(message: Record<string, unknown>): Identifiers {
  const ids = noIdentifiers();
  readAddress(ids, 'from', message.from);
  readBsuid(ids, 'from_user_id', message.from_user_id);
  readBsuid(ids, 'from_parent_user_id', message.from_parent_user_id, true);
  return ids;
}

/** The recipient a status names: `recipient_id`, `recipient_user_id` and the parent under either of its names. */
export function recipientOf(status: Record<string, unknown>): Identifiers {
  const ids = noIdentifiers();
  readAddress(ids, 'recipient_id', status.recipient_id);
  readBsuid(ids, 'recipient_user_id', status.recipient_user_id);
  readBsuid(ids, 'recipient_parent_user_id', status.recipient_parent_user_id ?? status.parent_recipient_user_id, true);
  return ids;
}

/** One `contacts[]` entry of a callback or a send answer. */
export function contactEntry(entry: unknown): Identifiers {
  const ids = noIdentifiers();
  const e = fields(entry);
  if (!e) return ids;
  readAddress(ids, 'contacts.wa_id', e.wa_id);
  readBsuid(ids, 'contacts.user_id', e.user_id);
  readBsuid(ids, 'contacts.parent_user_id', e.parent_user_id, true);
  const profile = fields(e.profile);
  ids.name = str(profile?.name);
  ids.username = str(profile?.username);
  return ids;
}

/** The `contacts[]` entry naming the same person as `ids` (same number or same BSUID), merged into `ids`. */
export function withEntry(ids: Identifiers, entries: unknown): Identifiers {
  if (!Array.isArray(entries)) return ids;
  for (const raw of entries) {
    const entry = contactEntry(raw);
    const same = (ids.waId !== null && entry.waId === ids.waId) || (ids.bsuid !== null && entry.bsuid === ids.bsuid);
    if (!same) continue;
    return {
      waId: ids.waId ?? entry.waId, bsuid: ids.bsuid ?? entry.bsuid, parentBsuid: ids.parentBsuid ?? entry.parentBsuid,
      name: entry.name ?? ids.name, username: entry.username ?? ids.username, malformed: [...ids.malformed, ...entry.malformed],
    };
  }
  return ids;
}

/** The customer an echo went to: `to`, else `to_user_id`. */
export function echoRecipientOf(echo: Record<string, unknown>): Identifiers {
  const ids = noIdentifiers();
  readAddress(ids, 'to', echo.to);
  readBsuid(ids, 'to_user_id', echo.to_user_id);
  readBsuid(ids, 'to_parent_user_id', echo.to_parent_user_id, true);
  return ids;
}
