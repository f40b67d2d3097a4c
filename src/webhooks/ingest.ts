// Callback envelope -> stored facts: every entry, change, message and status is handled on its own.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { storageFaultReason } from '../errors';
import { fields } from '../support/loose-json';
import {
  CHANGE_FIELDS, NetworkChange, NetworkEcho, NetworkEntry, NetworkEnvelope, NetworkInboundMessage, NetworkMessagesValue, NetworkStatus,
} from '../../schemas/network';
import { errorJson } from './facts';
import { echoItem, inboundItem, statusItem, type ItemDeps } from './items';

export interface IngestDeps extends ItemDeps {
  userIdFor(phoneNumberId: string): number | undefined;
  /**
   * Runs one item atomically (a savepoint), so an item that throws leaves nothing half-written and is noted. Null: the
   * items run as they are and an error escapes (the whole callback is rolled back and run again with savepoints).
   */
  atomic: ((body: () => void) => void) | null;
}

/**
 * `failed`: an item threw (processing is worth retrying). `notes`: the first items skipped or refused, and why;
 * `moreNotes`: how many others were left out.
 */
export interface IngestResult {
  failed: boolean; notes: string[]; moreNotes: number;
  /** The first user a change was routed to (the raw callback is linked to it); a callback spans one number in practice. */
  userId?: number;
}

// The record of an event is bounded whatever the payload holds: 3 MB of bad items keep 20 short notes and a count.
export const NOTES_KEPT = 20;
export const NOTE_MAX_CHARS = 300;

const clip = (text: string): string => (text.length > NOTE_MAX_CHARS ? `${text.slice(0, NOTE_MAX_CHARS - 1)}…` : text);

/** Adds a note (clipped), or only counts it once NOTES_KEPT are kept. */
export function addNote(result: IngestResult, text: string): void {
  if (result.notes.length < NOTES_KEPT) result.notes.push(clip(text));
  else result.moreNotes += 1;
}

/** The notes as stored with the event (null when there are none). */
export function notesRecord(result: IngestResult): string | null {
  if (result.notes.length === 0) return null;
  return result.moreNotes > 0 ? `${result.notes.join('\n')}\n… and ${result.moreNotes} more` : result.notes.join('\n');
}

const checks = {
  envelope: TypeCompiler.Compile(NetworkEnvelope),
  entry: TypeCompiler.Compile(NetworkEntry),
  change: TypeCompiler.Compile(NetworkChange),
  value: TypeCompiler.Compile(NetworkMessagesValue),
  message: TypeCompiler.Compile(NetworkInboundMessage),
  status: TypeCompiler.Compile(NetworkStatus),
  echo: TypeCompiler.Compile(NetworkEcho),
};
const FIELDS = new Set<string>(Object.values(CHANGE_FIELDS));

export function ingest(payload: unknown, receivedAt: number, deps: IngestDeps): IngestResult {
  const result: IngestResult = { failed: false, notes: [], moreNotes: 0 };
  const note = (path: string, text: string) => addNote(result, `${path}: ${text}`);

  function valid<T extends TSchema>(check: TypeCheck<T>, value: unknown, path: string): value is Static<T> {
    if (check.Check(value)) return true;
    // Past the kept notes only the count matters: no need to work out what is wrong.
    if (result.notes.length >= NOTES_KEPT) {
      result.moreNotes += 1;
      return false;
    }
    const error = check.Errors(value).First();
    note(path + (error?.path.replaceAll('/', '.') ?? ''), error?.message ?? 'invalid');
    return false;
  }

  function guarded(path: string, body: () => void): void {
    if (deps.atomic === null) {
      body();
      return;
    }
    try {
      deps.atomic(body);
    } catch (error) {
      // A full disk or an I/O error is not this item's fault: the callback as a whole is not stored (503, retried).
      if (storageFaultReason(error) !== undefined) throw error;
      result.failed = true;
      note(path, error instanceof Error ? error.message : String(error));
    }
  }

  /** A change's lists: `messages` at the top, `standby` under `value.standby` (applied alike), echoes by where they come from. */
  function messagesValue(value: Static<typeof NetworkMessagesValue>, path: string, field: string): void {
    value.errors?.forEach((error, i) => note(`${path}.errors[${i}]`, `the network reported ${errorJson([error]) ?? 'an error'}`));
    const phoneNumberId = value.metadata.phone_number_id;
    const userId = deps.userIdFor(phoneNumberId);
    if (userId === undefined) {
      if (value.messages?.length || value.statuses?.length) note(path, `no user has phone_number_id ${phoneNumberId}; stored only`);
      return;
    }
    result.userId ??= userId;
    const standby = field === CHANGE_FIELDS.standby;
    const lists = standby ? value.standby ?? value : value;
    const base = standby && value.standby ? `${path}.standby` : path;
    const contacts = value.contacts ?? (fields(value.standby)?.contacts);
    lists.messages?.forEach((message, i) => {
      const at = `${base}.messages[${i}]`;
      if (!valid(checks.message, message, at)) return;
      guarded(at, () => inboundItem(deps, userId, message, contacts, (text) => note(at, text)));
    });
    lists.statuses?.forEach((status, i) => {
      const at = `${base}.statuses[${i}]`;
      if (!valid(checks.status, status, at)) return;
      guarded(at, () => statusItem(deps, userId, status, contacts, receivedAt, (text) => note(at, text)));
    });
    const echoes = standby ? value.standby?.message_echoes : field === CHANGE_FIELDS.echoes ? value.message_echoes : undefined;
    echoes?.forEach((echo, i) => {
      const at = `${base}.message_echoes[${i}]`;
      if (!valid(checks.echo, echo, at)) return;
      guarded(at, () => echoItem(deps, userId, echo, standby ? 'agent' : 'business_app', (text) => note(at, text)));
    });
  }

  if (!valid(checks.envelope, payload, 'payload')) return result;
  payload.entry.forEach((entry, e) => {
    if (!valid(checks.entry, entry, `entry[${e}]`)) return;
    entry.changes.forEach((change, c) => {
      const path = `entry[${e}].changes[${c}]`;
      if (!valid(checks.change, change, path) || !FIELDS.has(change.field)) return;
      if (valid(checks.value, change.value, `${path}.value`)) messagesValue(change.value, path, change.field);
    });
  });
  return result;
}
