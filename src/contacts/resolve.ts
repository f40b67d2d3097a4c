// Identity resolution: a payload's identifiers -> the user's contact (found, taught what it lacks, or created).
// Never merges: when the number and the BSUID belong to two contacts, the number's contact wins and nothing moves.
import type { Contact, ContactsRepo } from '../db/contacts-repo';
import type { Identifiers } from './identifiers';

export interface Resolved {
  contactId: number;
  /** What older releases keyed a conversation by: the number, else the BSUID. */
  key: string;
  /** Why an identifier was not linked (a conflict with another contact), for the event's notes. */
  conflict: string | null;
}

/** A number or BSUID change: the contact known by `previous` takes `next` and keeps the old identifiers as aliases. */
export interface IdentityChange {
  previous: Pick<Identifiers, 'waId' | 'bsuid'>;
  next: Pick<Identifiers, 'waId' | 'bsuid' | 'parentBsuid'>;
}

const keyOf = (c: Pick<Contact, 'waId' | 'bsuid' | 'id'>): string => c.waId ?? c.bsuid ?? `contact:${c.id}`;

export function createContactResolver(repo: ContactsRepo) {
  /** The contact of `ids` (at most two indexed lookups and one write); undefined when `ids` names nobody. */
  function resolve(userId: number, ids: Omit<Identifiers, 'malformed'>, at: number): Resolved | undefined {
    if (ids.waId === null && ids.bsuid === null) return undefined;
    const byPhone = ids.waId === null ? undefined : repo.byWaId(userId, ids.waId);
    const byBsuid = ids.bsuid === null || (byPhone !== undefined && byPhone.bsuid === ids.bsuid) ? byPhone : repo.byBsuid(userId, ids.bsuid);
    if (byPhone === undefined && byBsuid === undefined) {
      const id = repo.insert({ userId, waId: ids.waId, bsuid: ids.bsuid, parentBsuid: ids.parentBsuid, username: ids.username, name: ids.name, at });
      return { contactId: id, key: keyOf({ id, waId: ids.waId, bsuid: ids.bsuid }), conflict: null };
    }
    const contact = (byPhone ?? byBsuid)!;
    let conflict: string | null = null;
    let bsuid = ids.bsuid;
    if (byPhone !== undefined && byBsuid !== undefined && byPhone.id !== byBsuid.id) {
      conflict = `number ${ids.waId} belongs to contact ${byPhone.id} and user id ${ids.bsuid} to contact ${byBsuid.id}; kept apart (message in contact ${byPhone.id})`;
      bsuid = null;
    } else if (bsuid !== null && contact.bsuid !== null && contact.bsuid !== bsuid) {
      conflict = `contact ${contact.id} already has user id ${contact.bsuid}; ${bsuid} not linked`;
      bsuid = null;
    }
    const learns = (ids.waId !== null && contact.waId === null) || (bsuid !== null && contact.bsuid === null)
      || (ids.parentBsuid !== null && ids.parentBsuid !== contact.parentBsuid)
      || (ids.name !== null && ids.name !== contact.name) || (ids.username !== null && ids.username !== contact.username);
    // Only a change is written: an ordinary message of a known contact costs one lookup.
    if (learns) {
      repo.update(contact.id, { waId: conflict === null ? ids.waId : null, bsuid, parentBsuid: ids.parentBsuid, name: ids.name, username: ids.username, at });
    }
    return { contactId: contact.id, key: keyOf(contact), conflict };
  }

  /** Applies an identity change; the contact it happened to (created when unknown), or a conflict that moved nothing. */
  function change(userId: number, c: IdentityChange, at: number): Resolved | undefined {
    const known = (c.previous.waId === null ? undefined : repo.byWaId(userId, c.previous.waId))
      ?? (c.previous.bsuid === null ? undefined : repo.byBsuid(userId, c.previous.bsuid));
    if (known === undefined) {
      const resolved = resolve(userId, { ...c.next, name: null, username: null }, at)
        ?? resolve(userId, { ...c.previous, parentBsuid: null, name: null, username: null }, at);
      if (resolved) repo.update(resolved.contactId, { alias: c.previous.waId ?? c.previous.bsuid, at });
      return resolved;
    }
    const holders = [c.next.waId === null ? undefined : repo.byWaId(userId, c.next.waId), c.next.bsuid === null ? undefined : repo.byBsuid(userId, c.next.bsuid)];
    const other = holders.find((h) => h !== undefined && h.id !== known.id);
    if (other) {
      return { contactId: known.id, key: keyOf(known), conflict: `${c.next.waId ?? c.next.bsuid} already belongs to contact ${other.id}; contact ${known.id} kept as it was` };
    }
    const oldPhone = c.next.waId !== null && known.waId !== c.next.waId ? known.waId : null;
    const oldBsuid = c.next.bsuid !== null && known.bsuid !== c.next.bsuid ? known.bsuid : null;
    repo.update(known.id, { waId: c.next.waId, bsuid: c.next.bsuid, parentBsuid: c.next.parentBsuid, alias: oldPhone, at }, true);
    if (oldBsuid !== null) repo.update(known.id, { alias: oldBsuid, at });
    return { contactId: known.id, key: keyOf(known), conflict: null };
  }

  return {
    resolve,
    change,
    /** The user's contact `id`, or undefined when it is not one of theirs. */
    byId: (userId: number, id: number): Contact | undefined => repo.byId(userId, id),
    /** Teaches the contact of the user's outbound message `wamid` its BSUID (statuses); false when it had one or it is taken. */
    linkByWamid: repo.linkByWamid,
  };
}
export type ContactResolver = ReturnType<typeof createContactResolver>;
