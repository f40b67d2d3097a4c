// The sandbox's answers in the network's wire format: its refusals (error envelope), fresh wamids and ids, send answers.
import { randomBytes, randomInt } from 'node:crypto';
import { MESSAGING_PRODUCT, type NetworkErrorAnswer, type NetworkSendAnswer } from '../../schemas/network';
import type { SandboxErrorName } from '../../schemas/sandbox';


export type SandboxRefusal = SandboxErrorName | 'unknown_object' | 'media_upload' | 'unknown_path' | 'too_large';

interface ErrorSpec { status: number; code: number; subcode?: number; type: string; message: string; details?: string }

/** The real network's answers for each refusal (HTTP status, code, message, details). */
const ERRORS: Record<SandboxRefusal, ErrorSpec> = {
  bad_token: { status: 401, code: 190, type: 'OAuthException', message: 'Invalid OAuth access token - Cannot parse access token' },
  unknown_phone_number: {
    status: 400, code: 100, subcode: 33, type: 'GraphMethodException',
    message: 'Unsupported post request. Object with ID does not exist, cannot be loaded due to missing permissions, or does not support this operation.',
  },
  unknown_object: {
    status: 400, code: 100, subcode: 33, type: 'GraphMethodException',
    message: 'Unsupported get request. Object with ID does not exist, cannot be loaded due to missing permissions, or does not support this operation.',
  },
  unknown_path: { status: 400, code: 2500, type: 'OAuthException', message: 'Unknown path components' },
  media_upload: { status: 400, code: 131053, type: 'OAuthException', message: '(#131053) Media upload error', details: 'The file could not be uploaded.' },
  too_large: { status: 413, code: 100, type: 'OAuthException', message: '(#100) Request too large', details: 'The request body is too large.' },
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
  bsuid_not_supported: {
    status: 400, code: 131062, type: 'OAuthException', message: '(#131062) Business-scoped user ID recipients not supported',
    details: 'This message type cannot be sent to a business-scoped user ID (e.g. an authentication template). Send it to the phone number.',
  },
};

const fbtraceId = () => randomBytes(12).toString('base64url');

/** The network's refusal `name`; `details` replaces its generic details (e.g. naming the bad field). */
export function errorAnswer(name: SandboxRefusal, details?: string): { status: number; body: NetworkErrorAnswer } {
  return customErrorAnswer(details === undefined ? ERRORS[name] : { ...ERRORS[name], details });
}

/** Any refusal in the network's envelope (a scripted failure with its own code). */
export function customErrorAnswer(spec: ErrorSpec): { status: number; body: NetworkErrorAnswer } {
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

/** A numeric id like the network's media ids. */
export const freshMediaId = (): string => String(randomInt(1, 2 ** 47)) + String(randomInt(100, 1000));

/** `contacts[0]`: the recipient as sent (`input`), its phone when the network may share it (`wa_id`), its BSUID (`user_id`). */
export function sendAnswer(input: string, recipient: { waId?: string; userId: string }, wamid: string, template: boolean): NetworkSendAnswer {
  return {
    messaging_product: MESSAGING_PRODUCT,
    contacts: [{ input, ...(recipient.waId === undefined ? {} : { wa_id: recipient.waId }), user_id: recipient.userId }],
    messages: [template ? { id: wamid, message_status: 'accepted' } : { id: wamid }],
  };
}


/** An injected inbound message the sandbox cannot post (the control API answers it 400). */
export class InboundError extends Error {}
