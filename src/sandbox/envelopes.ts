// The callbacks the sandbox posts, shaped like the network's: status updates and inbound messages (text or media).
import { createHash } from 'node:crypto';
import { MESSAGING_PRODUCT, WEBHOOK_OBJECT, type NetworkCallback, type NetworkCallbackValue, type NetworkInboundMessage, type NetworkStatus } from '../../schemas/network';

export interface AccountInfo { phoneNumberId: string; displayPhoneNumber: string; businessAccountId: string }

const DEFAULT_ACCOUNT = { displayPhoneNumber: '15550000000', businessAccountId: '100000000000000' };

type CallbackItems = Pick<NetworkCallbackValue, 'contacts' | 'messages' | 'statuses'>;

function envelope(phoneNumberId: string, account: Partial<AccountInfo>, value: CallbackItems): NetworkCallback {
  const { displayPhoneNumber, businessAccountId } = { ...DEFAULT_ACCOUNT, ...account };
  return {
    object: WEBHOOK_OBJECT,
    entry: [{
      id: businessAccountId,
      changes: [{
        value: { messaging_product: MESSAGING_PRODUCT, metadata: { display_phone_number: displayPhoneNumber, phone_number_id: phoneNumberId }, ...value },
        field: 'messages',
      }],
    }],
  };
}

export interface StatusFact {
  wamid: string; status: 'sent' | 'delivered' | 'read'; recipient: string; timestamp: number;
  /** Echoed from the send, as the network does. */
  bizOpaqueCallbackData?: string;
}

/** A status callback shaped like the network's (conversation + pricing; `sent` carries the window's expiry). */
export function statusCallbackPayload(phoneNumberId: string, fact: StatusFact, account: Partial<AccountInfo> = {}): NetworkCallback {
  const conversationId = createHash('md5').update(`${phoneNumberId}:${fact.recipient}`).digest('hex');
  const status: NetworkStatus = {
    id: fact.wamid, status: fact.status, timestamp: String(fact.timestamp), recipient_id: fact.recipient,
    conversation: {
      id: conversationId,
      ...(fact.status === 'sent' ? { expiration_timestamp: String(fact.timestamp + 86_400) } : {}),
      origin: { type: 'business_initiated' },
    },
    pricing: { billable: true, pricing_model: 'CBP', category: 'business_initiated' },
    ...(fact.bizOpaqueCallbackData === undefined ? {} : { biz_opaque_callback_data: fact.bizOpaqueCallbackData }),
  };
  return envelope(phoneNumberId, account, { statuses: [status] });
}

export interface InboundFact { wamid: string; from: string; name: string; text: string; timestamp: number }

/** What an inbound media message carries: the media id to look up, its MIME type, sha256 (base64), caption, filename. */
export interface InboundMedia { type: 'image' | 'video' | 'audio' | 'document' | 'sticker'; id: string; mime_type: string; sha256: string; caption?: string; filename?: string }

/** An inbound message: a text, or media (with its caption as the text when given). */
export function inboundPayload(phoneNumberId: string, fact: Omit<InboundFact, 'text'> & { text?: string; media?: InboundMedia }, account: Partial<AccountInfo> = {}): NetworkCallback {
  const common = { from: fact.from, id: fact.wamid, timestamp: String(fact.timestamp) };
  let message: NetworkInboundMessage;
  if (fact.media) {
    const { type, ...media } = fact.media;
    message = { ...common, type, [type]: media };
  } else {
    message = { ...common, text: { body: fact.text ?? '' }, type: 'text' };
  }
  return envelope(phoneNumberId, account, { contacts: [{ profile: { name: fact.name }, wa_id: fact.from }], messages: [message] });
}

export const inboundTextPayload = (phoneNumberId: string, fact: InboundFact, account: Partial<AccountInfo> = {}): NetworkCallback =>
  inboundPayload(phoneNumberId, fact, account);
