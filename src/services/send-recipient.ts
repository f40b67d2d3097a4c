// Who a send goes to: exactly one of `to` (phone), `recipient` (BSUID) or `contact_id` (the caller's contact: its phone
// when known, else its BSUID) -> the address sent and the contact the message is stored with until the network answers.
import type { RecipientBody } from '../../schemas/messages';
import type { ContactResolver } from '../contacts/resolve';
import type { ContactRef } from '../db/messages-repo';
import { AppError } from '../errors';
import type { OutboundMessage } from '../messaging/client';

export interface Recipient {
  /** The address sent: a phone number, or with `bsuid` a business-scoped user id. */
  to: string;
  bsuid: boolean;
  /** Set for a `contact_id` send: the contact the caller named. */
  contactId?: number;
}

const FIELDS = ['to', 'recipient', 'contact_id'] as const;

/** Reads the one recipient of a send body; 400 for none or several, 404 for a contact that is not the caller's. */
export function recipientOf(body: RecipientBody, userId: number, contacts: Pick<ContactResolver, 'byId'>): Recipient {
  const given = FIELDS.filter((field) => body[field] !== undefined);
  if (given.length !== 1) {
    throw new AppError(400, 'VALIDATION_ERROR', given.length === 0
      ? 'body must name its recipient: one of to (phone number), recipient (user id) or contact_id'
      : `body names its recipient ${given.length} times (${given.join(', ')}): give exactly one of to, recipient or contact_id`);
  }
  if (body.to !== undefined) return { to: body.to, bsuid: false };
  if (body.recipient !== undefined) return { to: body.recipient, bsuid: true };
  const contact = contacts.byId(userId, body.contact_id!);
  if (contact === undefined) throw new AppError(404, 'CONTACT_NOT_FOUND', `You have no contact ${body.contact_id}`);
  if (contact.waId !== null) return { to: contact.waId, bsuid: false, contactId: contact.id };
  if (contact.bsuid !== null) return { to: contact.bsuid, bsuid: true, contactId: contact.id };
  throw new AppError(404, 'CONTACT_NOT_FOUND', `Contact ${body.contact_id} has neither a phone number nor a user id to send to`);
}

/** The message fields that address it (spread into an OutboundMessage). */
export const addressOf = (recipient: Recipient): { to: string; toBsuid?: true } =>
  (recipient.bsuid ? { to: recipient.to, toBsuid: true } : { to: recipient.to });

const NOBODY = { parentBsuid: null, name: null, username: null };

/** The contact a message is stored with until the network answers: the one named, else the contact of the address sent. */
export function contactOfSend(contacts: Pick<ContactResolver, 'resolve'>, userId: number, message: OutboundMessage, at: number, contactId?: number): ContactRef {
  if (contactId !== undefined) return { contactId, key: message.to };
  const ids = message.toBsuid ? { waId: null, bsuid: message.to } : { waId: message.to, bsuid: null };
  return contacts.resolve(userId, { ...ids, ...NOBODY }, at)!;
}

/** The contact of the network's answer: its number, else its user id (undefined when it named neither). */
export const contactAnswered = (contacts: Pick<ContactResolver, 'resolve'>, userId: number, answer: { waId: string | null; userId: string | null }, at: number) =>
  contacts.resolve(userId, { waId: answer.waId, bsuid: answer.userId, ...NOBODY }, at);
