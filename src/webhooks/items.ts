// One item of a callback -> stored facts: an inbound message (its contact resolved, identity changes applied, group
// messages and edits kept out of the list), a status (teaching its contact a BSUID), an echo of what the business sent.
import type { NetworkEcho, NetworkInboundMessage, NetworkStatus } from '../../schemas/network';
import { echoRecipientOf, isBsuid, isPhone, recipientOf, senderOf, withEntry, type Identifiers } from '../contacts/identifiers';
import type { IdentityChange, Resolved } from '../contacts/resolve';
import type { NewEcho, NewInbound, StatusEvent } from '../db/messages-repo';
import { fields, str } from '../support/loose-json';
import { inboundRow, locationJson, mediaJson, readableText, statusEvent, unixMs } from './facts';

export interface ItemDeps {
  resolveContact(userId: number, ids: Omit<Identifiers, 'malformed'>, at: number): Resolved | undefined;
  changeIdentity(userId: number, change: IdentityChange, at: number): Resolved | undefined;
  linkBsuid(userId: number, wamid: string, bsuid: string, parentBsuid: string | null, at: number): boolean;
  insertInbound(message: NewInbound): boolean;
  insertEcho(message: NewEcho): boolean;
  applyEdit(userId: number, wamid: string, text: string | null, at: number): boolean;
  applyRevoke(userId: number, wamid: string): boolean;
  applyStatus(userId: number, wamid: string, event: StatusEvent, receivedAt: number): unknown;
}
type Note = (text: string) => void;

const IDENTITY_CHANGES = new Set(['user_changed_user_id', 'user_changed_number']);
const bsuidOr = (value: unknown): string | null => { const s = str(value); return s !== null && isBsuid(s) ? s : null; };
const phoneOr = (value: unknown): string | null => { const s = str(value); return s !== null && isPhone(s) ? s : null; };

/** The identity change a `system` message announces, or undefined for any other message. */
function identityChange(message: NetworkInboundMessage, sender: Identifiers): IdentityChange | undefined {
  const system = fields(message.system);
  const type = str(system?.type);
  if (message.type !== 'system' || type === null || !IDENTITY_CHANGES.has(type)) return undefined;
  if (type === 'user_changed_user_id') {
    return {
      previous: { waId: sender.waId, bsuid: bsuidOr(system?.previous_user_id) },
      next: { waId: null, bsuid: bsuidOr(system?.user_id) ?? sender.bsuid, parentBsuid: bsuidOr(system?.parent_user_id) },
    };
  }
  return {
    previous: { waId: sender.waId, bsuid: bsuidOr(system?.previous_user_id) ?? sender.bsuid },
    next: { waId: phoneOr(system?.wa_id) ?? phoneOr(system?.new_wa_id), bsuid: bsuidOr(system?.user_id), parentBsuid: null },
  };
}

/** An edit or deletion of an earlier message: applied to it, never listed itself; false for any other message. */
function editOrRevoke(deps: ItemDeps, userId: number, message: NetworkInboundMessage | NetworkEcho, note: Note): boolean {
  if (message.type !== 'edit' && message.type !== 'revoke') return false;
  const own = fields(message[message.type]);
  const original = str(own?.original_message_id) ?? str(fields(message.context)?.id);
  if (original === null) {
    note(`${message.type} without original_message_id: ignored`);
    return true;
  }
  let found: boolean;
  if (message.type === 'revoke') found = deps.applyRevoke(userId, original);
  else {
    const edited = fields(own?.message) ?? own;
    const type = str(edited?.type) ?? 'text';
    const text = readableText({ ...edited, type, id: message.id, timestamp: message.timestamp } as NetworkInboundMessage);
    found = deps.applyEdit(userId, original, text, unixMs(message.timestamp));
  }
  if (!found) note(`${message.type} of unknown message ${original}: ignored`);
  return true;
}

export function inboundItem(deps: ItemDeps, userId: number, message: NetworkInboundMessage, contacts: unknown, note: Note): void {
  const groupId = str(message.group_id);
  if (groupId !== null) {
    note(`group message (group_id ${groupId}): not listed in a one-to-one conversation`);
    return;
  }
  if (editOrRevoke(deps, userId, message, note)) return;
  const sender = withEntry(senderOf(message), contacts);
  const at = unixMs(message.timestamp);
  const change = identityChange(message, sender);
  const resolved = change ? deps.changeIdentity(userId, change, at) : deps.resolveContact(userId, sender, at);
  if (resolved === undefined) {
    note(['neither a phone number nor a user id: not stored', ...sender.malformed].join('; '));
    return;
  }
  sender.malformed.forEach(note);
  if (resolved.conflict !== null) note(resolved.conflict);
  deps.insertInbound(inboundRow(message, userId, resolved));
}

export function statusItem(deps: ItemDeps, userId: number, status: NetworkStatus, contacts: unknown, receivedAt: number, note: Note): void {
  const event = statusEvent(status);
  deps.applyStatus(userId, status.id, event, receivedAt);
  const recipient = withEntry(recipientOf(status), contacts);
  recipient.malformed.forEach(note);
  if (recipient.bsuid !== null) deps.linkBsuid(userId, status.id, recipient.bsuid, recipient.parentBsuid, event.at);
}

export function echoItem(deps: ItemDeps, userId: number, echo: NetworkEcho, origin: NewEcho['origin'], note: Note): void {
  if (editOrRevoke(deps, userId, echo, note)) return;
  const recipient = echoRecipientOf(echo);
  const at = unixMs(echo.timestamp);
  const resolved = deps.resolveContact(userId, recipient, at);
  if (resolved === undefined) {
    note(['echo to neither a phone number nor a user id: not stored', ...recipient.malformed].join('; '));
    return;
  }
  recipient.malformed.forEach(note);
  const message = echo as unknown as NetworkInboundMessage;
  deps.insertEcho({
    userId, contact: resolved, wamid: echo.id, type: echo.type, text: readableText(message), to: recipient.waId ?? recipient.bsuid,
    origin, payloadJson: JSON.stringify(echo), createdAt: at, mediaJson: mediaJson(message), locationJson: locationJson(message),
  });
}
