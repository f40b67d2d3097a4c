// Schemas of the send endpoints (SPEC §5, §12): request bodies, the 201 answer, and errors carrying `upstream`.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorResponse, Nullable, RequestBody, Timestamp } from './common';
import { QueueFields } from './message-queue';
import { BSUID_PATTERN, LIST_ROWS_MAX, NetworkLocation, NetworkMedia, NetworkSendRequests, type NetworkMessageType } from './network-send';

export const PhoneNumber = Type.String({
  pattern: '^[1-9][0-9]{6,14}$', description: 'Recipient: 7–15 digits, no leading + or 0', examples: ['15551234567'],
});

/** Exactly one of them names the recipient (checked by the service: none or several is a 400). */
export const RecipientFields = {
  to: Type.Optional(PhoneNumber),
  recipient: Type.Optional(Type.String({
    pattern: BSUID_PATTERN, examples: ['US.13491208655302741918'],
    description: "Recipient by the network's business-scoped user id (BSUID), for users who share no phone number",
  })),
  contact_id: Type.Optional(Type.Integer({
    minimum: 1, maximum: Number.MAX_SAFE_INTEGER,
    description: 'Recipient by one of your contacts (`contact.id` in the conversations listing): sent to its phone number when known, else to its user id',
  })),
};
export interface RecipientBody { to?: string; recipient?: string; contact_id?: number }

const strict = { additionalProperties: false } as const;
type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The network's schema as the gateway validates it, with errors that name the field: a union of objects tagged by
 * `type`/`sub_type` becomes a `oneOf` with a `discriminator` (only the member the tag names is checked), and the
 * `{id} | {link}` media union becomes one object needing exactly one of the two. Same fields and limits.
 */
function readable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(readable);
  if (!isObject(schema)) return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, readable(value)]));
  const members = out.anyOf;
  if (!Array.isArray(members) || !members.every(isObject)) return out;
  const { anyOf: _anyOf, ...rest } = out;
  const tag = ['type', 'sub_type'].find((name) => members.every((m) => isObject(m.properties) && isObject(m.properties[name]) && 'const' in m.properties[name]));
  if (tag !== undefined) return { ...rest, oneOf: members, discriminator: { propertyName: tag } };
  const sources = members.map((m) => (m.required as string[] | undefined) ?? []);
  if (members.length === 2 && sources.every((r) => r.length === 1) && sources[0]![0] !== sources[1]![0]) {
    const properties = Object.assign({}, ...members.map((m) => m.properties)) as Json;
    const description = `Exactly one of ${sources[0]![0]} or ${sources[1]![0]}`;
    return { ...rest, type: 'object', description, properties, additionalProperties: false, oneOf: sources.map((required) => ({ required })) };
  }
  return out;
}
/** `readable` keeping the schema's static type. */
const Readable = <T extends TSchema>(schema: T, options: Json = {}) => Type.Unsafe<Static<T>>({ ...(readable(schema) as Json), ...options });

/** A union tagged by `propertyName`, validated as the member the tag names. */
const Discriminated = <T extends TSchema[]>(members: [...T], propertyName: string, options: Json = {}) =>
  Type.Unsafe<Static<T[number]>>({ oneOf: members, discriminator: { propertyName }, ...options });

// --- POST /api/message/send: every free-form type, the network's own fields ----------------------------

/** A reply: the wamid of the message quoted. */
export const Context = NetworkSendRequests.text.properties.context;

const FREE_FORM_EXAMPLES = {
  text: { text: { body: 'Hi Ana, your order has shipped', preview_url: false } },
  image: { image: { link: 'https://example.com/parcel.jpg', caption: 'Your parcel' } },
  video: { video: { id: '1479537139650973', caption: 'How to assemble it' } },
  audio: { audio: { id: '1479537139650973' } },
  document: { document: { link: 'https://example.com/invoice.pdf', filename: 'invoice.pdf', caption: 'Invoice 42' } },
  sticker: { sticker: { id: '1479537139650973' } },
  location: { location: { latitude: 52.5200, longitude: 13.4050, name: 'Pick-up point', address: 'Alexanderplatz 1, Berlin' } },
  contacts: { contacts: [{ name: { formatted_name: 'Ana Silva', first_name: 'Ana' }, phones: [{ phone: '+15551234567', type: 'CELL' }] }] },
  interactive: { interactive: { type: 'button', body: { text: 'Deliver tomorrow?' }, action: { buttons: [
    { type: 'reply', reply: { id: 'yes', title: 'Yes' } }, { type: 'reply', reply: { id: 'no', title: 'No' } }] } } },
  reaction: { reaction: { message_id: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA', emoji: '\u{1F44D}' } },
} as const;
export type FreeFormType = keyof typeof FREE_FORM_EXAMPLES;
export const FREE_FORM_TYPES = Object.keys(FREE_FORM_EXAMPLES) as FreeFormType[];

/** One `type` of POST /api/message/send: `{to, type, <type>: {...}, context?}`. */
function freeForm<K extends FreeFormType>(type: K) {
  const content = (NetworkSendRequests[type as NetworkMessageType].properties as unknown as Record<string, TSchema>)[type]!;
  return RequestBody({
    ...RecipientFields, type: Type.Literal(type), [type]: Readable(content), context: Context, ...QueueFields,
  } as typeof RecipientFields & { type: ReturnType<typeof Type.Literal<K>>; context: typeof Context } & typeof QueueFields & Record<K, TSchema>, {
    title: type, example: { to: '15551234567', type, ...FREE_FORM_EXAMPLES[type] },
  });
}
/** The network's own template object: name, language {code, policy?}, components with positional or named parameters. */
export const NetworkTemplate = NetworkSendRequests.template.properties.template;
export type NetworkTemplate = Static<typeof NetworkTemplate>;
const TEMPLATE_EXAMPLE = {
  to: '15551234567', type: 'template',
  template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', parameter_name: 'order', text: '42' }] }] },
};
const templateMember = RequestBody({ ...RecipientFields, type: Type.Literal('template'), template: Readable(NetworkTemplate), ...QueueFields }, {
  title: 'template', example: TEMPLATE_EXAMPLE,
  description: "A template in the network's own form: no components for a template without parameters (hello_world), or header, body and button components with positional or named (`parameter_name`) parameters",
});
const members = [...FREE_FORM_TYPES.map(freeForm), templateMember];

/** The network's content object of message type `K` (`text`, `image` …). */
export type FreeFormContent<K extends FreeFormType> = Static<(typeof NetworkSendRequests)[K]> extends infer B
  ? (B extends Record<K, infer C> ? C : never) : never;
/** The static type of a send body: the network's own types, by `type`. */
export type SendBody = (RecipientBody & { context?: Static<typeof Context>; token?: string; send_at?: string; expires_at?: string } & {
  [K in FreeFormType]: { type: K } & { [P in K]: FreeFormContent<K> }
}[FreeFormType]) | (RecipientBody & { type: 'template'; template: NetworkTemplate; token?: string; context?: undefined; send_at?: string; expires_at?: string });

export const SendBody = Discriminated(members, 'type', {
  description: `Exactly one recipient: \`to\` (phone number), \`recipient\` (business-scoped user id) or \`contact_id\`. A text or another free-form message, or a template (\`type: "template"\` with the network's own \`template\` object), with the network's own field names and limits. Media: exactly one of id (uploaded via POST /api/media) or link. Interactive lists: at most ${LIST_ROWS_MAX} rows in all sections together. \`context.message_id\` makes it a reply. One credit each.`,
  'x-examples': {
    ...Object.fromEntries(FREE_FORM_TYPES.map((type) => [type, { summary: type, value: { to: '15551234567', type, ...FREE_FORM_EXAMPLES[type] } }])),
    template: { summary: 'template', value: TEMPLATE_EXAMPLE },
  },
}) as unknown as ReturnType<typeof Type.Unsafe<SendBody>>;

// --- POST /api/message/send2: a template with body parameters, a header and buttons ----------------------

const TemplateParam = Type.String({ minLength: 1, maxLength: 1024 });
const [mediaById, mediaByLink] = NetworkMedia.document.anyOf;
const mediaHeader = <K extends 'image' | 'video' | 'document'>(kind: K) => Type.Object({
  type: Type.Literal(kind), id: Type.Optional(mediaById.properties.id), link: Type.Optional(mediaByLink.properties.link),
  ...(kind === 'document' ? { filename: mediaById.properties.filename } : {}),
}, { ...strict, oneOf: [{ required: ['id'] }, { required: ['link'] }], description: 'Exactly one of id or link' });

export const TemplateHeader = Discriminated([
  Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1, maxLength: 60 }) }, strict),
  mediaHeader('image'), mediaHeader('video'), mediaHeader('document'),
  Type.Object({ type: Type.Literal('location'), ...NetworkLocation.properties }, strict),
], 'type', { description: "The template header's parameter: text, media (id or link) or a location" });
export type TemplateHeader = { type: 'text'; text: string }
  | { type: 'image' | 'video' | 'document'; id?: string; link?: string; filename?: string }
  | ({ type: 'location' } & Static<typeof NetworkLocation>);

const ButtonIndex = Type.Optional(Type.Integer({ minimum: 0, maximum: 9, description: 'Position in the approved template; default: position in this list' }));
export const TemplateButton = Discriminated([
  Type.Object({ sub_type: Type.Literal('quick_reply'), payload: Type.String({ minLength: 1, maxLength: 1000 }), index: ButtonIndex }, strict),
  Type.Object({ sub_type: Type.Literal('url'), text: Type.String({ minLength: 1, maxLength: 2000, description: 'Suffix of the dynamic URL' }), index: ButtonIndex }, strict),
], 'sub_type');
export type TemplateButton = { sub_type: 'quick_reply'; payload: string; index?: number } | { sub_type: 'url'; text: string; index?: number };

export const SendTemplateBody = RequestBody({
  ...RecipientFields,
  template_name: Type.String({ pattern: '^[a-z0-9_]{1,512}$', examples: ['order_update'] }),
  language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', description: 'Language code such as en or en_US' }),
  param1: TemplateParam,
  param2: TemplateParam,
  param3: Type.Optional(TemplateParam),
  param4: Type.Optional(TemplateParam),
  param5: Type.Optional(TemplateParam),
  header: Type.Optional(TemplateHeader),
  buttons: Type.Optional(Type.Array(TemplateButton, { minItems: 1, maxItems: 10 })),
  ...QueueFields,
}, {
  description: 'Exactly one recipient: `to` (phone number), `recipient` (business-scoped user id) or `contact_id`. param1…param5 become, in order, the text parameters of the template body (no gaps: param4 needs param3, param5 needs param4); '
    + '`header` and `buttons` become the header and button components (order: header, body, buttons)',
  examples: [{
    to: '15551234567', template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: '42',
    header: { type: 'image', link: 'https://example.com/parcel.jpg' }, buttons: [{ sub_type: 'quick_reply', payload: 'track-42' }, { sub_type: 'url', text: '42' }],
  }],
});
export type SendTemplateBody = Static<typeof SendTemplateBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1, maxLength: 128, description: 'Same key and body within 24 h: the first answer again, no new send',
  })),
});

export const SendAnswer = Type.Object({
  id: Type.Integer(),
  wamid: Type.String({ description: "The network's message id" }),
  to: Type.String({ description: 'The recipient as sent: the number as typed, or the user id (BSUID)' }),
  contact_id: Type.Optional(Type.Integer({ description: "The contact whose conversation holds the message (the network's answer decides: its number, else its user id)" })),
  type: Type.Unsafe<FreeFormType | 'template'>({ type: 'string', enum: [...FREE_FORM_TYPES, 'template'] }),
  status: Type.Literal('accepted'),
  credits_remaining: Type.Integer(),
  created_at: Timestamp,
}, { title: 'SendAnswer', description: 'The network accepted the message: stored under `id`, one credit used' });

/** POST /api/message/{id}/read. */
export const MarkReadBody = Type.Object({
  typing_indicator: Type.Optional(Type.Boolean({ default: false, description: 'Also show the customer a typing indicator (until you answer, or about 25 s)' })),
}, { additionalProperties: false, examples: [{ typing_indicator: true }] });
export const MarkReadAnswer = Type.Object({
  id: Type.Integer(),
  wamid: Type.String({ description: "The network's id of the message marked read" }),
  typing_indicator: Type.Boolean({ description: 'Whether a typing indicator was asked for' }),
});

export const Upstream = Type.Object({
  http_status: Type.Integer(),
  code: Nullable(Type.Integer()),
  subcode: Nullable(Type.Integer()),
  message: Type.String(),
  details: Nullable(Type.String()),
  fbtrace_id: Nullable(Type.String()),
}, { description: "The messaging network's own error" });

/** 502 MESSAGING_REJECTED and 429 MESSAGING_RATE_LIMITED. */
export const UpstreamErrorResponse = Type.Composite([ErrorResponse, Type.Object({ upstream: Upstream })], {
  title: 'UpstreamErrorResponse', description: "The error shape with the messaging network's own error in `upstream`",
});

/** 429 of a send: MESSAGING_RATE_LIMITED (with `upstream`) or SEND_QUEUE_FULL (the gateway's own pacing: no `upstream`). */
export const SendRateLimitedResponse = Type.Composite([ErrorResponse, Type.Object({ upstream: Type.Optional(Upstream) })], {
  additionalProperties: true, title: 'SendRateLimitedResponse',
  description: "The error shape; with MESSAGING_RATE_LIMITED the network's own error in `upstream`, with SEND_QUEUE_FULL none (the gateway's pacing refused it before any network call)",
});

/** 502: MESSAGING_REJECTED (with `upstream`) or MESSAGING_OUTCOME_UNKNOWN (with the message `id` of the first request). */
export const SendBadGatewayResponse = Type.Composite([ErrorResponse, Type.Object({
  upstream: Type.Optional(Upstream),
  id: Type.Optional(Nullable(Type.Integer({ description: 'MESSAGING_OUTCOME_UNKNOWN: the message the first request stored' }))),
  wamid: Type.Optional(Type.String()),
  sent: Type.Optional(Type.Boolean()),
})], { additionalProperties: true, title: 'SendBadGatewayResponse', description: "The error shape with the network's error in `upstream`, or the stored message `id` when the outcome of a first request with this key is unknown" });

/** 503 STORAGE_UNAVAILABLE: after the network accepted the message, `sent: true` with its `id` and `wamid` (do not send again). */
export const SendStorageResponse = Type.Composite([ErrorResponse, Type.Object({
  id: Type.Optional(Type.Integer()),
  wamid: Type.Optional(Type.String()),
  sent: Type.Optional(Type.Boolean()),
})], { additionalProperties: true, title: 'SendStorageResponse', description: 'The error shape; when the network accepted the message but storing that failed, `sent: true` with its `id` and `wamid`: do not send it again' });
