// Stored events -> Event JSON text: the message's listed JSON as it stands now, and its contact. Rendered once per
// read, so one event fans out to many streams as the same bytes.
import type { StoredEvent } from '../db/events-repo';
import { isoUtc } from '../support/iso-utc';

/** The contact of an event (one place to change when conversations belong to contacts). */
export function eventContact(row: Pick<StoredEvent, 'contactWaId' | 'contactName'>): { wa_id: string | null; name: string | null } | null {
  if (row.contactWaId === null) return null;
  return { wa_id: row.contactWaId, name: row.contactName };
}

/** One event as JSON text. */
export function eventJson(row: StoredEvent): string {
  const status = row.type === 'message.status' && row.status !== null ? `,"status":${JSON.stringify(row.status)}` : '';
  return `{"id":${row.seq},"type":${JSON.stringify(row.type)},"created_at":"${isoUtc(row.createdAt)}",`
    + `"data":{"message":${row.messageJson ?? 'null'},"contact":${JSON.stringify(eventContact(row))}${status}}}`;
}
