// How a page names a contact: its name, else @username, else +number, else "user ·" and the end of its BSUID.
import type { ContactSummary } from '../db/conversations-repo';

const at = (username: string) => (username.startsWith('@') ? username : `@${username}`);

export function contactLabel(c: Pick<ContactSummary, 'contactName' | 'contactUsername' | 'contactWaId' | 'contactBsuid' | 'contactId'>): string {
  if (c.contactName) return c.contactName;
  if (c.contactUsername) return at(c.contactUsername);
  if (c.contactWaId) return `+${c.contactWaId}`;
  if (c.contactBsuid) return `user · ${c.contactBsuid.slice(-6)}`;
  return `contact ${c.contactId}`;
}

/** Every identifier of the contact, for its details: number, username, BSUID, parent BSUID, earlier ones. */
export function contactIdentifiers(c: ContactSummary): string[] {
  const ids: string[] = [];
  if (c.contactWaId) ids.push(`+${c.contactWaId}`);
  if (c.contactUsername) ids.push(at(c.contactUsername));
  if (c.contactBsuid) ids.push(`user id ${c.contactBsuid}`);
  if (c.contactParentBsuid) ids.push(`parent user id ${c.contactParentBsuid}`);
  let aliases: unknown = [];
  try {
    aliases = JSON.parse(c.contactAliasesJson);
  } catch {
    // A hand-edited row: no aliases shown.
  }
  if (Array.isArray(aliases)) for (const alias of aliases) if (typeof alias === 'string') ids.push(`formerly ${/^[0-9]+$/.test(alias) ? '+' : ''}${alias}`);
  return ids;
}

/** The `contact` query value that selects this contact: its number, else its user id, else `id:<id>`. */
export const contactKey = (c: Pick<ContactSummary, 'contactId' | 'contactWaId' | 'contactBsuid'>): string =>
  c.contactWaId ?? c.contactBsuid ?? `id:${c.contactId}`;
