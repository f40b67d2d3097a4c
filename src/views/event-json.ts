// Stored events -> Event JSON text: the message's listed JSON as it stands now, and its contact. Rendered once per
// read, so one event fans out to many streams as the same bytes.
import type { StoredEvent } from '../db/events-repo';
import { isoUtc } from '../support/iso-utc';

/** The contact of an event, as the conversation listing shows it (null once neither message nor contact is kept). */
export function eventContact(row: Pick<StoredEvent, 'contactId' | 'contactWaId' | 'contactBsuid' | 'contactUsername' | 'contactName'>):
  { id: number; wa_id: string | null; user_id: string | null; username: string | null; name: string | null } | null {
  if (row.contactId === null) return null;
  return { id: row.contactId, wa_id: row.contactWaId, user_id: row.contactBsuid, username: row.contactUsername, name: row.contactName };
}

/** One event as JSON text. */
export function eventJson(row: StoredEvent): string {
  const status = (row.type === 'message.status' || row.type === 'message.sent') && row.status !== null ? `,"status":${JSON.stringify(row.status)}` : '';
  return `{"id":${row.seq},"type":${JSON.stringify(row.type)},"created_at":"${isoUtc(row.createdAt)}",`
    + `"data":{"message":${row.messageJson ?? 'null'},"contact":${JSON.stringify(eventContact(row))}${status}}}`;
}
