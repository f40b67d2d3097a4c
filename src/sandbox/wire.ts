// The sandbox's side of the wire format: the network's refusals, fresh wamids, signed webhook envelopes.
import { createHash, randomBytes } from 'node:crypto';
import type { NetworkCallback, NetworkCallbackValue, NetworkErrorAnswer, NetworkSendAnswer, NetworkStatus } from '../../schemas/network';
import type { SandboxErrorName } from '../../schemas/sandbox';
import { MESSAGING_PRODUCT, WEBHOOK_OBJECT } from '../messaging/client';

export interface AccountInfo { phoneNumberId: string; displayPhoneNumber: string; businessAccountId: string }

interface ErrorSpec { status: number; code: number; subcode?: number; type: string; message: string; details?: string }

/** The real network's answers for each refusal (HTTP status, code, message, details). */
const ERRORS: Record<SandboxErrorName, ErrorSpec> = {
  bad_token: { status: 401, code: 190, type: 'OAuthException', message: 'Invalid OAuth access token - Cannot parse access token' },
  unknown_phone_number: {
    status: 400, code: 100, subcode: 33, type: 'GraphMethodException',
    message: 'Unsupported post request. Object with ID does not exist, cannot be loaded due to missing permissions, or does not support this operation.',
  },
  invalid_parameter: { status: 400, code: 100, type: 'OAuthException', message: '(#100) Invalid parameter', details: 'The request body does not match the API.' },
  undeliverable: {
    status: 400, code: 131026, type: 'OAuthException', message: '(#131026) Message Undeliverable',
    details: 'Unable to deliver message. Reasons can include: the recipient phone number is not a WhatsApp phone number.',
  },
  throttled: { status: 429, code: 130429, type: 'OAuthException', message: '(#130429) Rate limit hit', details: 'Cloud API message throughput has been reached.' },
  app_rate_limit: { status: 400, code: 4, type: 'OAuthException', message: '(#4) Application request limit reached', details: 'Too many API calls.' },
  pair_rate_limit: {
    status: 400, code: 131056, type: 'OAuthException', message: '(#131056) (Business Account, Consumer Account) pair rate limit hit',
    details: 'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
  },
  server_error: { status: 500, code: 131000, type: 'OAuthException', message: '(#131000) Something went wrong', details: 'Message failed to send due to an unknown error.' },
  service_unavailable: { status: 503, code: 131016, type: 'OAuthException', message: '(#131016) Service unavailable', details: 'A service is temporarily unavailable.' },
};

const fbtraceId = () => randomBytes(12).toString('base64url');

export function errorAnswer(name: SandboxErrorName): { status: number; body: NetworkErrorAnswer } {
  const spec = ERRORS[name];
  return {
    status: spec.status,
    body: {
      error: {
        message: spec.message, type: spec.type, code: spec.code,
        ...(spec.subcode === undefined ? {} : { error_subcode: spec.subcode }),
        ...(spec.details === undefined ? {} : { error_data: { messaging_product: MESSAGING_PRODUCT, details: spec.details } }),
        fbtrace_id: fbtraceId(),
      },
    },
  };
}

/** `wamid.` and base64, like the network's ids. */
export const freshWamid = (): string => 'wamid.' + randomBytes(30).toString('base64');

export function sendAnswer(to: string, waId: string, wamid: string, template: boolean): NetworkSendAnswer {
  return {
    messaging_product: MESSAGING_PRODUCT,
    contacts: [{ input: to, wa_id: waId }],
    messages: [template ? { id: wamid, message_status: 'accepted' } : { id: wamid }],
  };
}

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

export interface StatusFact { wamid: string; status: 'sent' | 'delivered' | 'read'; recipient: string; timestamp: number }

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
  };
  return envelope(phoneNumberId, account, { statuses: [status] });
}

export interface InboundFact { wamid: string; from: string; name: string; text: string; timestamp: number }

export function inboundTextPayload(phoneNumberId: string, fact: InboundFact, account: Partial<AccountInfo> = {}): NetworkCallback {
  return envelope(phoneNumberId, account, {
    contacts: [{ profile: { name: fact.name }, wa_id: fact.from }],
    messages: [{ from: fact.from, id: fact.wamid, timestamp: String(fact.timestamp), text: { body: fact.text }, type: 'text' }],
  });
}
