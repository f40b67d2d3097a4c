// The network's send surface (Cloud API `POST /{phone_number_id}/messages`): every message type, its fields and limits.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;
/** A business-scoped user id: a two-letter country code, a dot, an optional `ENT.` (a parent id), up to 128 letters and digits. */
export const BSUID_PATTERN = '^[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}$';
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Link = Type.String({ pattern: '^https?://\\S+$', maxLength: 2000, description: 'http(s) URL the network fetches' });
const MediaId = Type.String({ minLength: 1, maxLength: 200, description: 'id of uploaded media' });
const Latitude = Type.Number({ minimum: -90, maximum: 90 });
const Longitude = Type.Number({ minimum: -180, maximum: 180 });

/** Exactly one of `{id}` or `{link}`, with the fields this media type allows. */
const media = <P extends Record<string, TSchema>>(extra: P) => Type.Union([
  Type.Object({ id: MediaId, ...extra }, strict),
  Type.Object({ link: Link, ...extra }, strict),
]);
const Caption = Type.Optional(Text(1024));
const Filename = Type.Optional(Text(240));

export const NetworkMedia = {
  image: media({ caption: Caption }),
  video: media({ caption: Caption }),
  audio: media({ voice: Type.Optional(Type.Boolean()) }),
  document: media({ caption: Caption, filename: Filename }),
  sticker: media({}),
};

export const NetworkLocation = Type.Object({
  latitude: Latitude, longitude: Longitude, name: Type.Optional(Type.String({ maxLength: 1000 })), address: Type.Optional(Type.String({ maxLength: 1000 })),
}, strict);

const typed = (type: string) => Type.Optional(Type.String({ maxLength: 40, description: `e.g. ${type}` }));
export const NetworkContact = Type.Object({
  name: Type.Object({
    formatted_name: Text(1000), first_name: Type.Optional(Type.String()), last_name: Type.Optional(Type.String()),
    middle_name: Type.Optional(Type.String()), suffix: Type.Optional(Type.String()), prefix: Type.Optional(Type.String()),
  }, strict),
  phones: Type.Optional(Type.Array(Type.Object({ phone: Type.Optional(Type.String()), type: typed('CELL'), wa_id: Type.Optional(Type.String()) }, strict))),
  emails: Type.Optional(Type.Array(Type.Object({ email: Type.Optional(Type.String()), type: typed('WORK') }, strict))),
  addresses: Type.Optional(Type.Array(Type.Object({
    street: Type.Optional(Type.String()), city: Type.Optional(Type.String()), state: Type.Optional(Type.String()), zip: Type.Optional(Type.String()),
    country: Type.Optional(Type.String()), country_code: Type.Optional(Type.String()), type: typed('HOME'),
  }, strict))),
  birthday: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
  org: Type.Optional(Type.Object({ company: Type.Optional(Type.String()), department: Type.Optional(Type.String()), title: Type.Optional(Type.String()) }, strict)),
  urls: Type.Optional(Type.Array(Type.Object({ url: Type.Optional(Type.String()), type: typed('WORK') }, strict))),
}, strict);

// --- interactive ---
const InteractiveHeader = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Text(60) }, strict),
  Type.Object({ type: Type.Literal('image'), image: NetworkMedia.image }, strict),
  Type.Object({ type: Type.Literal('video'), video: NetworkMedia.video }, strict),
  Type.Object({ type: Type.Literal('document'), document: NetworkMedia.document }, strict),
]);
const InteractiveCommon = {
  header: Type.Optional(InteractiveHeader),
  body: Type.Object({ text: Text(1024) }, strict),
  footer: Type.Optional(Type.Object({ text: Text(60) }, strict)),
};
/** The most rows the network takes in one list message, all sections together. */
export const LIST_ROWS_MAX = 10;
export const NetworkInteractive = Type.Union([
  Type.Object({
    type: Type.Literal('button'), ...InteractiveCommon,
    action: Type.Object({
      buttons: Type.Array(Type.Object({ type: Type.Literal('reply'), reply: Type.Object({ id: Text(256), title: Text(20) }, strict) }, strict), { minItems: 1, maxItems: 3 }),
    }, strict),
  }, strict),
  Type.Object({
    type: Type.Literal('list'), ...InteractiveCommon,
    action: Type.Object({
      button: Text(20),
      sections: Type.Array(Type.Object({
        title: Type.Optional(Text(24)),
        rows: Type.Array(Type.Object({ id: Text(200), title: Text(24), description: Type.Optional(Type.String({ maxLength: 72 })) }, strict), { minItems: 1, maxItems: LIST_ROWS_MAX }),
      }, strict), { minItems: 1, maxItems: 10 }),
    }, strict),
  }, strict),
  Type.Object({
    type: Type.Literal('cta_url'), ...InteractiveCommon,
    action: Type.Object({ name: Type.Literal('cta_url'), parameters: Type.Object({ display_text: Text(20), url: Link }, strict) }, strict),
  }, strict),
]);

// --- template ---
const Named = { parameter_name: Type.Optional(Type.String({ pattern: '^[a-z0-9_]{1,100}$', description: 'named parameter' })) };
const TextParam = Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1, maxLength: 32768 }), ...Named }, strict);
const CurrencyParam = Type.Object({
  type: Type.Literal('currency'), ...Named,
  currency: Type.Object({ fallback_value: Type.String({ minLength: 1 }), code: Type.String({ pattern: '^[A-Z]{3}$' }), amount_1000: Type.Integer() }, strict),
}, strict);
const DateTimeParam = Type.Object({ type: Type.Literal('date_time'), ...Named, date_time: Type.Object({ fallback_value: Type.String({ minLength: 1 }) }, strict) }, strict);
const HeaderMediaParams = (['image', 'video', 'document'] as const).map((kind) =>
  Type.Object({ type: Type.Literal(kind), [kind]: NetworkMedia[kind], ...Named }, strict));
const LocationParam = Type.Object({ type: Type.Literal('location'), location: NetworkLocation }, strict);
const PayloadParam = Type.Object({ type: Type.Literal('payload'), payload: Type.String({ minLength: 1, maxLength: 1000 }) }, strict);

export const NetworkTemplateComponent = Type.Union([
  Type.Object({ type: Type.Literal('header'), parameters: Type.Array(Type.Union([TextParam, CurrencyParam, DateTimeParam, ...HeaderMediaParams, LocationParam]), { minItems: 1 }) }, strict),
  Type.Object({ type: Type.Literal('body'), parameters: Type.Array(Type.Union([TextParam, CurrencyParam, DateTimeParam])) }, strict),
  Type.Object({
    type: Type.Literal('button'), sub_type: Type.Union([Type.Literal('quick_reply'), Type.Literal('url')]),
    index: Type.Union([Type.Integer({ minimum: 0, maximum: 9 }), Type.String({ pattern: '^[0-9]$' })], { description: 'position in the approved template' }),
    parameters: Type.Array(Type.Union([PayloadParam, TextParam]), { minItems: 1 }),
  }, strict),
]);
export type NetworkTemplateComponent = Static<typeof NetworkTemplateComponent>;

// --- the request bodies ---
const SendCommon = {
  messaging_product: Type.String(),
  recipient_type: Type.Optional(Type.Literal('individual')),
  // Exactly one of them: `to` a phone number, `recipient` a business-scoped user id (BSUID). Checked by who reads the body.
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  recipient: Type.Optional(Type.String({ pattern: BSUID_PATTERN, description: 'business-scoped user id, e.g. US.13491208655302741918' })),
  context: Type.Optional(Type.Object({ message_id: Type.String({ minLength: 1 }) }, strict)),
  biz_opaque_callback_data: Type.Optional(Type.String({ maxLength: 512 })),
};
const send = <K extends string, S extends TSchema>(type: K, schema: S) =>
  Type.Object({ ...SendCommon, type: Type.Literal(type), [type]: schema } as typeof SendCommon & { type: ReturnType<typeof Type.Literal<K>> } & Record<K, S>, strict);

export const NetworkTextRequest = send('text', Type.Object({ body: Text(4096), preview_url: Type.Optional(Type.Boolean()) }, strict));
export const NetworkTemplateRequest = send('template', Type.Object({
  name: Text(512),
  language: Type.Object({ code: Type.String({ minLength: 2, maxLength: 15 }), policy: Type.Optional(Type.Literal('deterministic')) }, strict),
  components: Type.Optional(Type.Array(NetworkTemplateComponent)),
}, strict));

/** Each send body by its `type`: the sandbox checks a body against the one its type names. */
export const NetworkSendRequests = {
  text: NetworkTextRequest,
  image: send('image', NetworkMedia.image),
  video: send('video', NetworkMedia.video),
  audio: send('audio', NetworkMedia.audio),
  document: send('document', NetworkMedia.document),
  sticker: send('sticker', NetworkMedia.sticker),
  location: send('location', NetworkLocation),
  contacts: send('contacts', Type.Array(NetworkContact, { minItems: 1 })),
  interactive: send('interactive', NetworkInteractive),
  reaction: send('reaction', Type.Object({ message_id: Type.String({ minLength: 1 }), emoji: Type.String({ maxLength: 16, description: 'empty: removes the reaction' }) }, strict)),
  template: NetworkTemplateRequest,
};
export type NetworkMessageType = keyof typeof NetworkSendRequests;

const R = NetworkSendRequests;
export const NetworkSendRequest = Type.Union([
  R.text, R.image, R.video, R.audio, R.document, R.sticker, R.location, R.contacts, R.interactive, R.reaction, R.template,
]);
export type NetworkSendRequest = Static<typeof NetworkSendRequest>;

/** Marking an inbound message read (optionally showing a typing indicator): answered `{"success": true}`. */
export const NetworkMarkReadRequest = Type.Object({
  messaging_product: Type.String(),
  status: Type.Literal('read'),
  message_id: Type.String({ minLength: 1 }),
  typing_indicator: Type.Optional(Type.Object({ type: Type.Literal('text') }, strict)),
}, strict);
export type NetworkMarkReadRequest = Static<typeof NetworkMarkReadRequest>;
