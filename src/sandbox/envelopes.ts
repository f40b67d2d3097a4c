// The callbacks the sandbox posts, shaped like the network's: statuses, inbound messages (text or media) and echoes.
import { MESSAGING_PRODUCT, WEBHOOK_OBJECT } from '../../schemas/network';
import type { CallbackUser } from './users';

export interface AccountInfo { phoneNumberId: string; displayPhoneNumber: string; businessAccountId: string }

const DEFAULT_ACCOUNT = { displayPhoneNumber: '15550000000', businessAccountId: '100000000000000' };

/** Which webhook field a callback comes under; `standby` items sit in `value.standby` (the network's AI agent holds the chat). */
export type CallbackField = 'messages' | 'standby' | 'smb_message_echoes';
type Items = Record<string, unknown>;
/** A callback as posted (looser than the gateway's view of it: a phone-less message has no `from`). */
export interface SandboxCallback {
  object: string;
  entry: { id: string; changes: { value: Items & { messaging_product: string; metadata: { display_phone_number: string; phone_number_id: string } }; field: string }[] }[];
}

function envelope(phoneNumberId: string, account: Partial<AccountInfo>, items: Items, field: CallbackField = 'messages'): SandboxCallback {
  const { displayPhoneNumber, businessAccountId } = { ...DEFAULT_ACCOUNT, ...account };
  return {
    object: WEBHOOK_OBJECT,
    entry: [{
      id: businessAccountId,
      changes: [{
        value: {
          messaging_product: MESSAGING_PRODUCT, metadata: { display_phone_number: displayPhoneNumber, phone_number_id: phoneNumberId },
          ...(field === 'standby' ? { standby: items } : items),
        },
        field,
      }],
    }],
  };
}

const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** A `contacts[]` entry: profile (name, username), wa_id when the phone is shown, user_id, parent_user_id. */
function contactEntry(user: CallbackUser, name?: string): Record<string, unknown> {
  return defined({
    profile: defined({ name: name ?? user.name, username: user.username }),
    wa_id: user.waId, user_id: user.userId, parent_user_id: user.parentUserId,
  });
}

/** The network's per-message pricing (PMP): a template is billed, a free-form reply inside the 24 h window is not. */
export const pricingFor = (template: boolean) => (template
  ? { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' }
  : { billable: false, pricing_model: 'PMP', type: 'free_customer_service', category: 'service' });

export interface StatusFact {
  wamid: string; status: 'sent' | 'delivered' | 'read'; timestamp: number;
  /** `recipient_id`: the phone, only when the network may share it. */
  recipient?: string;
  /** The recipient's ids and profile: `recipient_user_id`, the parent id and `contacts[]` (absent: none of them, as before 2026). */
  user?: CallbackUser;
  /** The parent id's field: `recipient_parent_user_id` (since 2026-05-05) or its earlier name. */
  parentField?: 'recipient_parent_user_id' | 'parent_recipient_user_id';
  /** Whether the message was a template (its pricing); default a template. */
  template?: boolean;
  /** Echoed from the send, as the network does. */
  bizOpaqueCallbackData?: string;
}

/** A status callback shaped like the network's: recipient ids, per-message pricing, `contacts[]` when the user has a BSUID. */
export function statusCallbackPayload(phoneNumberId: string, fact: StatusFact, account: Partial<AccountInfo> = {}, field: CallbackField = 'messages'): SandboxCallback {
  const user = fact.user;
  const status = defined({
    id: fact.wamid, status: fact.status, timestamp: String(fact.timestamp), recipient_id: fact.recipient,
    recipient_user_id: user?.userId, [fact.parentField ?? 'recipient_parent_user_id']: user?.userId === undefined ? undefined : user.parentUserId,
    pricing: pricingFor(fact.template ?? true),
    biz_opaque_callback_data: fact.bizOpaqueCallbackData,
  });
  const contacts = user?.userId === undefined ? {} : { contacts: [contactEntry({ ...user, waId: fact.recipient })] };
  return envelope(phoneNumberId, account, { ...contacts, statuses: [status] }, field);
}

export interface InboundFact {
  wamid: string; timestamp: number; text: string;
  /** The sender's phone (`from`, `contacts[].wa_id`); absent for a user whose phone is not shown. */
  from?: string;
  name?: string;
  /** The sender's BSUID and the rest: `from_user_id`, `from_parent_user_id`, `contacts[].user_id`, `profile.username`. */
  user?: CallbackUser;
}

/** What an inbound media message carries: the media id to look up, its MIME type, sha256 (base64), caption, filename. */
export interface InboundMedia { type: 'image' | 'video' | 'audio' | 'document' | 'sticker'; id: string; mime_type: string; sha256: string; caption?: string; filename?: string }

/** An inbound message: a text, or media (with its caption as the text when given). */
export function inboundPayload(
  phoneNumberId: string, fact: Omit<InboundFact, 'text'> & { text?: string; media?: InboundMedia }, account: Partial<AccountInfo> = {}, field: CallbackField = 'messages',
): SandboxCallback {
  const user = fact.user ?? {};
  const common = defined({
    from: fact.from, from_user_id: user.userId, from_parent_user_id: user.parentUserId, id: fact.wamid, timestamp: String(fact.timestamp),
  });
  let message: Record<string, unknown>;
  if (fact.media) {
    const { type, ...media } = fact.media;
    message = { ...common, type, [type]: media };
  } else {
    message = { ...common, text: { body: fact.text ?? '' }, type: 'text' };
  }
  const contact = contactEntry({ ...user, waId: fact.from }, fact.name ?? 'Sandbox Contact');
  return envelope(phoneNumberId, account, { contacts: [contact], messages: [message] }, field);
}

export const inboundTextPayload = (phoneNumberId: string, fact: InboundFact, account: Partial<AccountInfo> = {}): SandboxCallback =>
  inboundPayload(phoneNumberId, fact, account);

export interface EchoFact { wamid: string; timestamp: number; text: string; origin: 'agent' | 'business_app'; to?: string; toUserId?: string }

/**
 * An echo of a text the business sent outside this API: by the network's AI agent (`field: standby`,
 * `value.standby.message_echoes[]`) or from the phone app of a coexistence number (`field: smb_message_echoes`, `value.message_echoes[]`).
 */
export function echoPayload(phoneNumberId: string, fact: EchoFact, account: Partial<AccountInfo> = {}): SandboxCallback {
  const { displayPhoneNumber } = { ...DEFAULT_ACCOUNT, ...account };
  const echo = defined({
    from: displayPhoneNumber, to: fact.to, to_user_id: fact.toUserId, id: fact.wamid, timestamp: String(fact.timestamp), type: 'text', text: { body: fact.text },
  });
  return envelope(phoneNumberId, account, { message_echoes: [echo] }, fact.origin === 'agent' ? 'standby' : 'smb_message_echoes');
}
