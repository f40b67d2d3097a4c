// Contacts of a user: found by phone number, BSUID or id, created, and taught new identifiers. Prepared statements
// (the webhook's hot path); a UNIQUE index per identifier makes a second owner of a number or BSUID impossible.
import type { DB } from './client';
import { eventLogOf } from './events-repo';

export interface Contact {
  id: number; userId: number; waId: string | null; bsuid: string | null; parentBsuid: string | null;
  username: string | null; name: string | null; aliasesJson: string;
}
export interface NewContact {
  userId: number; waId: string | null; bsuid: string | null; parentBsuid: string | null;
  username: string | null; name: string | null; at: number;
}
/** What a payload says about a known contact: null/undefined fields leave the stored value as it is. */
export interface ContactUpdate {
  waId?: string | null; bsuid?: string | null; parentBsuid?: string | null; username?: string | null; name?: string | null;
  /** An identifier the contact leaves behind (kept in its aliases). */
  alias?: string | null;
  at: number;
}

const COLUMNS = `id, user_id AS userId, wa_id AS waId, bsuid, parent_bsuid AS parentBsuid, username, name, aliases_json AS aliasesJson`;

export function createContactsRepo(db: DB) {
  const client = db.$client;
  const byWaId = client.prepare<[number, string], Contact>(`SELECT ${COLUMNS} FROM contacts WHERE user_id = ? AND wa_id = ?`);
  const byBsuid = client.prepare<[number, string], Contact>(`SELECT ${COLUMNS} FROM contacts WHERE user_id = ? AND bsuid = ?`);
  const byId = client.prepare<[number, number], Contact>(`SELECT ${COLUMNS} FROM contacts WHERE user_id = ? AND id = ?`);
  const insert = client.prepare<NewContact>(`INSERT INTO contacts (user_id, wa_id, bsuid, parent_bsuid, username, name, created_at, updated_at)
    VALUES (@userId, @waId, @bsuid, @parentBsuid, @username, @name, @at, @at)`);
  // A new identifier replaces the old one only when asked to (an identity change); otherwise it fills a gap. The
  // caller has checked that no other contact holds it; OR IGNORE keeps a raced one from failing the write.
  const update = client.prepare<Required<Omit<ContactUpdate, 'alias'>> & { id: number; alias: string | null; replace: 0 | 1 }, { userId: number }>(`
    UPDATE OR IGNORE contacts SET
      wa_id = CASE WHEN @waId IS NOT NULL AND (@replace = 1 OR wa_id IS NULL) THEN @waId ELSE wa_id END,
      bsuid = CASE WHEN @bsuid IS NOT NULL AND (@replace = 1 OR bsuid IS NULL) THEN @bsuid ELSE bsuid END,
      parent_bsuid = coalesce(@parentBsuid, parent_bsuid),
      username = coalesce(@username, username),
      name = coalesce(@name, name),
      aliases_json = CASE WHEN @alias IS NULL OR EXISTS (SELECT 1 FROM json_each(aliases_json) WHERE value = @alias) THEN aliases_json
                          ELSE json_insert(aliases_json, '$[#]', @alias) END,
      updated_at = @at
    WHERE id = @id RETURNING user_id AS userId`);
  // Statuses: the contact of an outbound message learns its BSUID (only when it has none and no other contact holds it).
  const linkByWamid = client.prepare<{ userId: number; wamid: string; bsuid: string; parentBsuid: string | null; at: number }, { id: number }>(`
    UPDATE OR IGNORE contacts SET bsuid = @bsuid, parent_bsuid = coalesce(@parentBsuid, parent_bsuid), updated_at = @at
    WHERE id = (SELECT c.contact_id FROM messages m JOIN conversations c ON c.id = m.conversation_id
                WHERE m.user_id = @userId AND m.wamid = @wamid) AND bsuid IS NULL RETURNING id`);
  // contact.updated, in the transaction of the change: the contact gained an identifier, a name or a username.
  const appendEvent = eventLogOf(client).appendContact;
  const orNull = (value: string | null | undefined) => value ?? null;

  return {
    byWaId: (userId: number, waId: string): Contact | undefined => byWaId.get(userId, waId),
    byBsuid: (userId: number, bsuid: string): Contact | undefined => byBsuid.get(userId, bsuid),
    byId: (userId: number, id: number): Contact | undefined => byId.get(userId, id),
    insert: (contact: NewContact): number => Number(insert.run(contact).lastInsertRowid),
    /** Fills what the contact lacks (or, with `replace`, takes the new identifiers); whether a row changed. */
    update(id: number, change: ContactUpdate, replace = false): boolean {
      const row = update.get({
        id, waId: orNull(change.waId), bsuid: orNull(change.bsuid), parentBsuid: orNull(change.parentBsuid),
        username: orNull(change.username), name: orNull(change.name), alias: orNull(change.alias), at: change.at, replace: replace ? 1 : 0,
      });
      // An earlier identifier kept as an alias alone is not shown in the contact: no event for it.
      const shown = [change.waId, change.bsuid, change.parentBsuid, change.username, change.name].some((v) => v !== null && v !== undefined);
      if (row !== undefined && shown) appendEvent('contact.updated', row.userId, id);
      return row !== undefined;
    },
    /** Links a BSUID to the contact of the user's message `wamid`, if that contact has none yet; whether it did. */
    linkByWamid(userId: number, wamid: string, bsuid: string, parentBsuid: string | null, at: number): boolean {
      const row = linkByWamid.get({ userId, wamid, bsuid, parentBsuid, at });
      if (row !== undefined) appendEvent('contact.updated', userId, row.id);
      return row !== undefined;
    },
  };
}
export type ContactsRepo = ReturnType<typeof createContactsRepo>;
