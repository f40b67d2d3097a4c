// The event feed: the Event object, the pull query and answer, API keys and event endpoints.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RequestBody, Timestamp } from './common';
import { Contact, Message } from './conversations';

export const EVENT_TYPE_NAMES = ['message.received', 'message.sent', 'message.status', 'message.media', 'message.edited', 'contact.updated'] as const;
const EventTypeEnum = Type.Unsafe<(typeof EVENT_TYPE_NAMES)[number]>({ type: 'string', enum: [...EVENT_TYPE_NAMES] });

/** The contact of the event (the message's, or the one contact.updated reports), as it stands when the event is read. */
export const EventContact = Contact;

export const Event = Type.Object({
  id: Type.Integer({ minimum: 1, description: "The event's number in this user's log: 1, 2, 3 … with no gap" }),
  type: EventTypeEnum,
  created_at: Timestamp,
  data: Type.Object({
    message: Nullable({ ...Message, description: 'The message as it stands when the event is read (listing shape); null for contact.updated and once retention deleted it' }),
    contact: Nullable(EventContact),
    status: Type.Optional(Type.String({ description: 'message.status: the status this event recorded (queued, pending, accepted, sent, delivered, read, failed); message.sent of a queued or scheduled send: queued or scheduled (absent for a direct send)' })),
  }),
}, { title: 'Event', description: 'One entry of the per-user event log' });
export type EventJson = Static<typeof Event>;

/** Comma-separated event types. */
const TypesList = Type.String({
  pattern: `^(${EVENT_TYPE_NAMES.map((t) => t.replace('.', '\\.')).join('|')})(,(${EVENT_TYPE_NAMES.map((t) => t.replace('.', '\\.')).join('|')}))*$`,
  description: `Only these types, comma-separated: ${EVENT_TYPE_NAMES.join(', ')}`,
});

export const EventsQuery = Type.Object({
  after: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Events with a greater id' }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, description: 'Seconds to wait for an event when none is there yet (long poll)' })),
  types: Type.Optional(TypesList),
}, { additionalProperties: false });
export type EventsQuery = Static<typeof EventsQuery>;

export const EventsPage = Type.Object({
  events: Type.Array(Event, { description: 'Oldest first' }),
  next_after: Type.Integer({ description: 'The `after` of the next call' }),
  has_more: Type.Boolean({ description: 'More events are there already: call again at once' }),
});

export const StreamQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Resume after this id (Last-Event-ID wins)' })),
  types: Type.Optional(TypesList),
}, { additionalProperties: false });

// API keys.
export const KeyParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  key_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
}, { additionalProperties: false });
export const NewKeyBody = RequestBody({ name: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for' }) },
  { examples: [{ name: 'support bot' }] });
export const CreatedKey = Type.Object({
  id: Type.Integer(), name: Type.String(),
  key: Type.String({ description: '`gwk_…`: shown only in this answer; send it as `Authorization: Bearer gwk_…`' }),
  created_at: Timestamp,
});
export const ListedKey = Type.Object({
  id: Type.Integer(), name: Type.String(), last4: Type.String({ description: 'The last 4 characters of the key' }),
  created_at: Timestamp, last_used_at: Nullable({ ...Timestamp, description: 'To the minute; null when never used' }),
});
export const KeyList = Type.Object({ keys: Type.Array(ListedKey) });

// Event endpoints.
export const EndpointParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  endpoint_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
}, { additionalProperties: false });
export const ParkedParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  endpoint_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  event_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
}, { additionalProperties: false });
const EndpointUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL the events are POSTed to' });
const EndpointTypes = Type.Array(EventTypeEnum, { minItems: 1, uniqueItems: true, description: 'Only these event types (default: all)' });
const EndpointDescription = Type.String({ maxLength: 500 });
export const NewEndpointBody = RequestBody({ url: EndpointUrl, types: Type.Optional(EndpointTypes), description: Type.Optional(EndpointDescription) },
  { examples: [{ url: 'https://bot.example.com/events', types: ['message.received', 'message.status'], description: 'support bot' }] });
export const UpdateEndpointBody = RequestBody({
  url: Type.Optional(EndpointUrl), types: Type.Optional(Nullable(EndpointTypes)), description: Type.Optional(Nullable(EndpointDescription)),
  enabled: Type.Optional(Type.Boolean({ description: 'false disables; true re-enables, resuming from the cursor' })),
}, { minProperties: 1, examples: [{ enabled: true }] });
export const ReplayBody = RequestBody({ after: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Deliver again every event after this id' }) },
  { examples: [{ after: 0 }] });

const LastAttempt = Type.Object({
  at: Timestamp, status: Nullable(Type.Integer({ description: 'HTTP status; null when no answer came' })),
  duration_ms: Type.Integer(), error: Nullable(Type.String()),
});
export const Endpoint = Type.Object({
  id: Type.Integer(), url: Type.String(), description: Nullable(Type.String()), types: Nullable(Type.Array(Type.String())),
  state: Type.Unsafe<'enabled' | 'disabled'>({ type: 'string', enum: ['enabled', 'disabled'] }),
  disabled_reason: Nullable(Type.String()),
  cursor: Type.Integer({ description: 'The last event id delivered' }),
  lag: Type.Integer({ description: 'Events written after the cursor' }),
  failures: Type.Integer({ description: 'Failed attempts in a row' }),
  next_attempt_at: Nullable(Timestamp),
  last_attempt: Nullable(LastAttempt),
  parked: Type.Array(Type.Object({ event_id: Type.Integer(), last_status: Nullable(Type.Integer()), parked_at: Timestamp }),
    { description: 'Events refused 3 times, set aside (retry each with …/parked/{event_id}/retry)' }),
  created_at: Timestamp, updated_at: Timestamp,
});
export const CreatedEndpoint = Type.Object({ ...Endpoint.properties, secret: Type.String({ description: '`whsec_…`: shown only in this answer' }) });
export const EndpointList = Type.Object({ endpoints: Type.Array(Endpoint) });
export const AttemptAnswer = Type.Object({
  delivered: Type.Boolean({ description: 'The endpoint answered 2xx' }),
  status: Nullable(Type.Integer()), duration_ms: Type.Integer(), error: Nullable(Type.String()),
});
