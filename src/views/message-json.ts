// Stored message rows -> the SPEC §7 message objects: the one renderer, run when a write changes a message
// (messages.listed_json), so that listings only concatenate. Stored JSON is read defensively: a shape we
// do not know becomes null fields, never an error.
import type { Message } from '../../schemas/conversations';
import type { MessageRenderer, StoredMessage, StoredStatus, StatusColumns } from '../db/listed-messages';
import { errorInfo, fields, num, str } from '../support/loose-json';
import { isoUtc } from '../support/iso-utc';

function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Template as stored by the sender: `{name, language, params}` or the wire `{name, language: {code}, components}`. */
function template(text: string | null): Message['template'] {
  const value = fields(parse(text));
  if (!value || typeof value.name !== 'string') return undefined;
  const language = str(fields(value.language)?.code ?? value.language);
  let params: unknown[] = Array.isArray(value.params) ? value.params : [];
  if (!Array.isArray(value.params) && Array.isArray(value.components)) {
    const body = value.components.map(fields).find((c) => c?.type === 'body');
    if (Array.isArray(body?.parameters)) params = body.parameters.map((p) => fields(p)?.text ?? p);
  }
  return { name: value.name, language, params: params.map(str).filter((p): p is string => p !== null) };
}

/**
 * Inbound media, and outbound media sent by an upload's id, also say whether the archive holds the file (media_json's
 * `stored`/`error`, set by the download worker).
 */
function media(text: string | null, messageId: number, inbound: boolean): Message['media'] {
  const value = fields(parse(text));
  if (!value) return undefined;
  const listed: NonNullable<Message['media']> = { id: str(value.id), mime_type: str(value.mime_type), sha256: str(value.sha256), filename: str(value.filename) };
  if (!inbound) {
    // Outbound media: what was sent (a link instead of an id, and the caption).
    if ('link' in value) listed.link = str(value.link);
    if ('caption' in value) listed.caption = str(value.caption);
  }
  if (inbound || listed.id !== null) {
    listed.stored = value.stored === true;
    listed.url = listed.stored ? `/api/media/${messageId}` : null;
    listed.error = str(value.error);
  }
  return listed;
}

function location(text: string | null): Message['location'] {
  const value = fields(parse(text));
  if (!value) return undefined;
  return { latitude: num(value.latitude), longitude: num(value.longitude), name: str(value.name), address: str(value.address) };
}

/**
 * What the customer tapped: an interactive button_reply / list_reply (`id`, `title`) or a template quick-reply `button`
 * (`payload`, `text`): the id the business set and the title shown. Read from the network's message object as stored.
 */
function tapped(type: string, payloadJson: string | null): Message['reply'] {
  const value = fields(parse(payloadJson));
  if (type === 'button') {
    const button = fields(value?.button);
    return button ? { id: str(button.payload), title: str(button.text) } : undefined;
  }
  const interactive = fields(value?.interactive);
  const kind = str(interactive?.type);
  if (kind !== 'button_reply' && kind !== 'list_reply') return undefined;
  const reply = fields(interactive?.[kind]);
  return reply ? { id: str(reply.id), title: str(reply.title) } : undefined;
}

type StatusEntry = NonNullable<Message['statuses']>[number];

/** One entry of an outbound message's status history. */
function statusEntry([status, at, error, pricing]: StoredStatus): StatusEntry {
  const entry: StatusEntry = { status, at: isoUtc(at), error: errorInfo(parse(error)) };
  const pricingValue = fields(parse(pricing ?? null));
  if (pricingValue) entry.pricing = pricingValue;
  return entry;
}

/** One message object. */
export function messageJson(row: StoredMessage): Message {
  const [id, wamid, direction, type, text, toNumber, status, errorJson, templateJson, mediaJson, locationJson, replyTo,
    createdAt, statusUpdatedAt, history, origin, pricingJson, editedAt, editsJson, revoked, payloadJson] = row;
  // Stored as the network named them: the schema's enums list what it sends.
  const message: Message = { id, wamid, direction, type: type as Message['type'], text, status: status as Message['status'], created_at: isoUtc(createdAt) };
  // Outbound messages always say whether they failed; an inbound one only when the network flagged it (unsupported).
  if (direction === 'outbound' || errorJson !== null) message.error = errorInfo(parse(errorJson));
  if (direction === 'outbound') {
    if (toNumber !== null) message.to = toNumber;
    message.status_updated_at = statusUpdatedAt === null ? null : isoUtc(statusUpdatedAt);
    message.statuses = (history ?? []).map(statusEntry);
    message.origin = origin === 'agent' || origin === 'business_app' ? origin : 'api';
    const pricingValue = fields(parse(pricingJson ?? null));
    if (pricingValue) message.pricing = pricingValue;
  }
  if (editedAt !== null && editedAt !== undefined) {
    message.edited_at = isoUtc(editedAt);
    const edits = parse(editsJson ?? null);
    message.edits = (Array.isArray(edits) ? edits : []).map(fields).filter((e) => e !== undefined)
      .map((e) => ({ text: str(e.text), at: typeof e.at === 'number' ? isoUtc(e.at) : null }));
  }
  if (revoked) message.revoked = true;
  const templateValue = template(templateJson);
  if (templateValue) message.template = templateValue;
  const mediaValue = media(mediaJson, id, direction === 'inbound');
  if (mediaValue) message.media = mediaValue;
  const locationValue = location(locationJson);
  if (locationValue) message.location = locationValue;
  if (replyTo !== null) message.reply_to = replyTo;
  if (direction === 'inbound' && (type === 'interactive' || type === 'button')) {
    const reply = tapped(type, payloadJson ?? null);
    if (reply) message.reply = reply;
  }
  return message;
}

/** One message object as JSON text: what messages.listed_json holds. */
export const listedMessageJson = (row: StoredMessage): string => JSON.stringify(messageJson(row));

/**
 * An outbound message's listed JSON after a status callback, or after the network accepted it (`wamid`), rendered
 * afresh from the parsed object: the current status fields from the row, the new history entry (if one was recorded)
 * in its place by time, and the message's pricing once known, where `messageJson` puts it.
 */
function reparsed(listed: string, current: StatusColumns, added: StoredStatus | undefined, wamid?: string): string {
  const message = JSON.parse(listed) as Message;
  if (wamid !== undefined) message.wamid = wamid;
  message.status = current.status as Message['status'];
  message.status_updated_at = current.statusUpdatedAt === null ? null : isoUtc(current.statusUpdatedAt);
  message.error = errorInfo(parse(current.errorJson));
  if (added) {
    const statuses = message.statuses ?? (message.statuses = []);
    // History is ordered by time, then by arrival: the new entry goes after every entry not later than it.
    const later = statuses.findIndex((entry) => Date.parse(entry.at) > added[1]);
    statuses.splice(later === -1 ? statuses.length : later, 0, statusEntry(added));
  }
  const json = JSON.stringify(message);
  const pricing = message.pricing ? undefined : pricingText(current.pricingJson);
  // Found as text (cheaper than rebuilding the object in that key order). No string value can hold `,"origin":"`
  // unescaped, and no object after it does.
  return pricing === undefined ? json : withPricing(json, afterOrigin(json, json.lastIndexOf(ORIGIN)), pricing);
}

const ORIGIN = ',"origin":"';
/** Where the value of `origin` ends in `json`, its key being at `origin`. */
const afterOrigin = (json: string, origin: number): number => json.indexOf('"', origin + ORIGIN.length) + 1;
/** The message's first pricing where a fresh render puts it: right after `origin`'s value, which ends at `at`. */
const withPricing = (json: string, at: number, pricing: string): string => `${json.slice(0, at)},"pricing":${pricing}${json.slice(at)}`;
/** Stored pricing as listed (parsed and serialised again, as a fresh render shows it); undefined when there is none. */
function pricingText(pricingJson: string | null | undefined): string | undefined {
  const value = fields(parse(pricingJson ?? null));
  return value ? JSON.stringify(value) : undefined;
}

/**
 * Where the array whose `[` is at `open` ends (the index of its `]`, or -1 when the text ends first), and where its last
 * object or array element starts (-1: none): a walk over the JSON text that skips strings.
 */
function arrayBounds(json: string, open: number): { close: number; last: number } {
  let depth = 0;
  let last = -1;
  for (let i = open; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) { // a string: to its closing quote, past escaped characters
      for (i++; i < json.length && json.charCodeAt(i) !== 0x22; i++) if (json.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (depth === 1) last = i;
      depth++;
    } else if (c === 0x5d || c === 0x7d) {
      if (--depth === 0) return { close: i, last };
    }
  }
  return { close: -1, last };
}

/**
 * The same answer as `reparsed`, patched as text on the webhook's and the send's hot paths (a third to half of the
 * time of parsing and serialising the whole message): each changed value is replaced where a fresh
 * render puts it, and the new history entry appended. Falls back to `reparsed` for what it does not cover (an entry
 * that goes before a later one, a message without the outbound fields). Keys are found as text with their quotes:
 * a string value never holds an unescaped quote, and the keys searched come before any object of free shape.
 * test/listed-json.test.ts holds it equal to a fresh render.
 */
function withStatus(listed: string, current: StatusColumns, added: StoredStatus | undefined, wamid?: string): string {
  const fallback = () => reparsed(listed, current, added, wamid);
  const status = listed.indexOf(',"status":"');
  const created = listed.indexOf('","created_at":"', status);
  const error = listed.indexOf(',"error":', created);
  const updated = listed.indexOf(',"status_updated_at":', error);
  const history = listed.indexOf(',"statuses":[', updated);
  if (status === -1 || created === -1 || error === -1 || updated === -1 || history === -1) return fallback();
  const to = listed.indexOf(',"to":"', error);
  const errorEnd = to !== -1 && to < updated ? to : updated;
  const open = history + ',"statuses":'.length;
  const { close, last } = arrayBounds(listed, open);
  if (close === -1) return fallback();
  let head = listed.slice(0, status);
  if (wamid !== undefined) {
    const unset = '"wamid":null,';
    const at = head.indexOf(unset);
    if (at === -1) return fallback();
    head = `${head.slice(0, at)}"wamid":${JSON.stringify(wamid)},${head.slice(at + unset.length)}`;
  }
  const entry = added && statusEntry(added);
  let entries = listed.slice(open + 1, close);
  if (added) {
    if (close > open + 1) {
      // Appended only when the last entry (the latest: the history is in time order) is not later than the new one.
      const AT = '"at":"';
      const at = last === -1 ? -1 : listed.indexOf(AT, last);
      if (at === -1 || at > close || Date.parse(listed.slice(at + AT.length, listed.indexOf('"', at + AT.length))) > added[1]) return fallback();
      entries += ',';
    }
    entries += JSON.stringify(entry);
  }
  let rest = listed.slice(close + 1);
  if (!rest.startsWith(ORIGIN)) return fallback();
  const originEnd = afterOrigin(rest, 0);
  if (originEnd === 0) return fallback();
  // The entry's pricing, parsed once, when the message shares it.
  const pricing = rest.startsWith(',"pricing":', originEnd) ? undefined
    : current.pricingJson === added?.[3] ? entry?.pricing && JSON.stringify(entry.pricing) : pricingText(current.pricingJson);
  if (pricing !== undefined) rest = withPricing(rest, originEnd, pricing);
  const updatedAt = current.statusUpdatedAt === null ? 'null' : `"${isoUtc(current.statusUpdatedAt)}"`;
  return `${head},"status":${JSON.stringify(current.status)}${listed.slice(created + 1, error)},"error":${JSON.stringify(errorInfo(parse(current.errorJson)))}`
    + `${listed.slice(errorEnd, updated)},"status_updated_at":${updatedAt},"statuses":[${entries}]${rest}`;
}

/** How stored messages become listed JSON: rendered afresh, or patched after a status callback. */
export const listedMessage: MessageRenderer = { render: listedMessageJson, withStatus };
