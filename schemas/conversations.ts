// Conversations (SPEC §7): the query of GET /api/user/{id}/conversations and its answer.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common';

export const MESSAGE_TYPES = ['text', 'template', 'image', 'audio', 'video', 'document', 'sticker', 'location', 'contacts',
  'interactive', 'button', 'reaction', 'order', 'system', 'unsupported'] as const;
export const FILTERS = ['today', 'yesterday', 'last_7_days', 'last_30_days', 'this_month', 'all'] as const;
export type Filter = (typeof FILTERS)[number];

/** A string from a fixed list, as a plain JSON Schema `enum` (clear "allowed values" errors, no anyOf). */
function StringEnum<T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
const Time = (description: string) => Type.String({ format: 'date-time', description });

export const ContactDigits = Type.String({
  pattern: '^([0-9]{1,20}|[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}|id:[1-9][0-9]{0,15})$',
  description: "The contact: its phone number (digits), its user id (BSUID, e.g. US.13491208655302741918) or id:<contact id>",
});

/** Filters shared by the JSON endpoint and the admin thread page. */
export const ConversationFilters = {
  type: Type.Optional(StringEnum(MESSAGE_TYPES, { description: 'Only messages of this type' })),
  filter: Type.Optional(StringEnum(FILTERS, { description: `Only messages in this period, in TIMEZONE (calendar days)`, default: 'all' })),
  contact: Type.Optional(ContactDigits),
};

export const ConversationsQuery = Type.Object({
  ...ConversationFilters,
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Conversations per page' }),
  before: Type.Optional(Time('ISO 8601 with a zone: only conversations whose last matching message is older (next page)')),
}, { additionalProperties: false });
export type ConversationsQuery = Static<typeof ConversationsQuery>;

export const ErrorInfo = Type.Object({
  // The network's codes are numbers (131047); the gateway's own, when the network was never reached, are names.
  code: Type.Union([Type.Integer(), Type.String(), Type.Null()]),
  title: Nullable(Type.String()),
  details: Nullable(Type.String()),
}, { description: "The network's error (or the gateway's, when the network was never reached)" });
export type ErrorInfo = Static<typeof ErrorInfo>;

export const Pricing = Type.Object({
  pricing_model: Type.Optional(Type.String()), type: Type.Optional(Type.String()), category: Type.Optional(Type.String({
    description: 'e.g. marketing, utility, authentication, authentication_international (also written authentication-international), service',
  })), billable: Type.Optional(Type.Boolean()),
}, { additionalProperties: true, description: "The network's pricing of the message, as sent with a status" });

export const StatusEntry = Type.Object({
  status: Type.String(), at: Timestamp, error: Nullable(ErrorInfo),
  pricing: Type.Optional(Pricing),
});

/** Types a listed message may have: what the gateway sends, and what the network delivers (as it names them). */
export const LISTED_MESSAGE_TYPES = [...MESSAGE_TYPES, 'request_welcome', 'unknown'] as const;
export const MESSAGE_STATUSES = ['queued', 'scheduled', 'pending', 'accepted', 'sent', 'delivered', 'read', 'failed', 'received'] as const;

export const Message = Type.Object({
  id: Type.Integer(),
  wamid: Nullable(Type.String()),
  direction: StringEnum(['inbound', 'outbound'] as const),
  type: StringEnum(LISTED_MESSAGE_TYPES, { description: 'The message type, as the network names it' }),
  text: Nullable(Type.String({ description: 'Readable text: body, caption, title, emoji, location name; null for templates' })),
  status: StringEnum(MESSAGE_STATUSES, { description: 'queued | scheduled (waiting in the send queue), pending | accepted | sent | failed | delivered | read (outbound), received (inbound)' }),
  created_at: Timestamp,
  to: Type.Optional(Type.String({ description: 'Outbound: the recipient as sent (the number as typed, or a user id)' })),
  status_updated_at: Type.Optional(Nullable(Timestamp)),
  error: Type.Optional(Nullable(ErrorInfo)),
  template: Type.Optional(Type.Object({ name: Type.String(), language: Nullable(Type.String()), params: Type.Array(Type.String()) })),
  media: Type.Optional(Type.Object({
    id: Nullable(Type.String()), mime_type: Nullable(Type.String()), sha256: Nullable(Type.String()), filename: Nullable(Type.String()),
    stored: Type.Optional(Type.Boolean({ description: 'Inbound, and outbound sent by an uploaded id: whether the gateway holds the file (downloaded in the background; an outbound one once the network accepted the message)' })),
    url: Type.Optional(Nullable(Type.String({ description: 'Inbound, and outbound sent by an uploaded id: `/api/media/{id}` once stored, else null' }))),
    error: Type.Optional(Nullable(Type.String({
      description: 'Inbound, and outbound sent by an uploaded id: why the download failed for good (sha256_mismatch, too_large, lookup_refused, download_refused, '
        + 'url_refused: the lookup named a URL the token must not go to, unavailable: still failing after 24 h of retries), '
        + 'or no_space while the archive is full (tried again once there is room); null otherwise',
    }))),
    link: Type.Optional(Nullable(Type.String({ description: 'Outbound: the link sent instead of an uploaded id' }))),
    caption: Type.Optional(Nullable(Type.String({ description: 'Outbound: the caption sent' }))),
  })),
  location: Type.Optional(Type.Object({
    latitude: Nullable(Type.Number()), longitude: Nullable(Type.Number()), name: Nullable(Type.String()), address: Nullable(Type.String()),
  })),
  reply_to: Type.Optional(Type.String({ description: 'The wamid this message quotes' })),
  reply: Type.Optional(Type.Object({
    id: Nullable(Type.String({ description: 'The id (interactive button or list row) or payload (template quick-reply button) the business set' })),
    title: Nullable(Type.String({ description: 'The title the customer saw and tapped (also in `text`)' })),
  }, { description: 'Inbound interactive button_reply / list_reply and template quick-reply button messages: what the customer tapped' })),
  statuses: Type.Optional(Type.Array(StatusEntry, { description: 'Outbound: status history, oldest first' })),
  origin: Type.Optional(Type.Unsafe<'api' | 'agent' | 'business_app'>({
    type: 'string', enum: ['api', 'agent', 'business_app'],
    description: "Outbound: api (sent through this gateway), agent (the network's AI agent answered) or business_app (sent from the phone app of a coexistence number); only api sends cost a credit",
  })),
  pricing: Type.Optional(Pricing),
  edited_at: Type.Optional(Timestamp),
  edits: Type.Optional(Type.Array(Type.Object({ text: Nullable(Type.String()), at: Nullable(Timestamp) }), { description: 'Earlier texts of an edited message, oldest first' })),
  revoked: Type.Optional(Type.Literal(true, { description: 'The sender deleted it' })),
}, { title: 'Message', description: 'One message as listed: the same shape in conversations, events and GET /api/message/{id}' });
export type Message = Static<typeof Message>;

export const Contact = Type.Object({
  id: Type.Integer({ description: "The contact's id (send to it with contact_id)" }),
  wa_id: Nullable(Type.String({ description: 'Phone number (digits); null when the network shares none' })),
  user_id: Nullable(Type.String({ description: "The network's business-scoped user id (BSUID), once known" })),
  username: Nullable(Type.String()),
  name: Nullable(Type.String()),
}, { title: 'Contact', description: 'A person the user talks with, known by phone number and/or the network user id' });
export type Contact = Static<typeof Contact>;

export const Conversation = Type.Object({
  contact: Contact,
  last_message_at: Time('Time of the last message matching the query'),
  message_count: Type.Integer({ description: 'Messages matching the query' }),
  service_window_expires_at: Nullable(Time('24 h after the last inbound message')),
  messages: Type.Array(Message, { description: 'Oldest first; at most the latest 200 matching' }),
}, { title: 'Conversation', description: 'A contact with its latest messages' });
export type Conversation = Static<typeof Conversation>;

export const ContactMessagesParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The user id' }),
  contact_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "The contact's id (the listing's contact.id)" }),
}, { additionalProperties: false });
const MessageId = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
export const ContactMessagesQuery = Type.Object({
  before_id: Type.Optional(MessageId('Only messages with a smaller id: the newest `limit` of them (the page before; default: the latest)')),
  after_id: Type.Optional(MessageId('Only messages with a greater id: the oldest `limit` of them (the page after; not with before_id)')),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Messages per page' }),
}, { additionalProperties: false });
export type ContactMessagesQuery = Static<typeof ContactMessagesQuery>;
export const ContactMessagesPage = Type.Object({
  messages: Type.Array(Message, { description: 'Oldest first, by message id (the order messages were stored in)' }),
  next_before_id: Nullable(Type.Integer({ description: 'Pass as before_id for the older page; null when no older message exists' })),
  next_after_id: Nullable(Type.Integer({ description: 'Pass as after_id for the newer page; null when no newer message exists yet' })),
});

export const ConversationList = Type.Array(Conversation, { description: 'Newest conversation first' });
