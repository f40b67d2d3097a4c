// Stored message rows -> the SPEC §7 message objects. Stored JSON is read defensively: a shape we
// do not know becomes null fields, never an error.
import type { ErrorInfo, Message } from '../../schemas/conversations';
import type { StoredMessage } from '../db/conversations-repo';
import { isoUtc } from './iso-utc';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const num = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A stored error is whatever the sender or the webhook kept: the network's `errors` array, its
 * `{error: {...}}` envelope, one error object, the gateway's upstream summary, or plain text.
 */
export function errorInfo(text: string | null): ErrorInfo | null {
  let value = parse(text);
  if (value === null) return null;
  if (Array.isArray(value)) value = value[0];
  if (isObject(value) && Array.isArray(value.errors)) value = value.errors[0];
  if (isObject(value) && isObject(value.error)) value = value.error;
  if (!isObject(value)) return { code: null, title: str(value), details: null };
  const data = isObject(value.error_data) ? value.error_data : {};
  const code = typeof value.code === 'number' && Number.isInteger(value.code) ? value.code : str(value.code);
  const title = str(value.title) ?? str(value.message) ?? str(value.error_user_title);
  const details = str(data.details) ?? str(value.details) ?? str(value.error_user_msg)
    ?? (str(value.message) !== title ? str(value.message) : null);
  return { code, title, details };
}

/** Template as stored by the sender: `{name, language, params}` or the wire `{name, language: {code}, components}`. */
function template(text: string | null): Message['template'] {
  const value = parse(text);
  if (!isObject(value) || typeof value.name !== 'string') return undefined;
  const language = isObject(value.language) ? str(value.language.code) : str(value.language);
  let params: unknown[] = Array.isArray(value.params) ? value.params : [];
  if (!Array.isArray(value.params) && Array.isArray(value.components)) {
    const body = value.components.find((c) => isObject(c) && c.type === 'body');
    if (isObject(body) && Array.isArray(body.parameters)) params = body.parameters.map((p) => (isObject(p) ? p.text : p));
  }
  return { name: value.name, language, params: params.map(str).filter((p): p is string => p !== null) };
}

function media(text: string | null): Message['media'] {
  const value = parse(text);
  if (!isObject(value)) return undefined;
  return { id: str(value.id), mime_type: str(value.mime_type), sha256: str(value.sha256), filename: str(value.filename) };
}

function location(text: string | null): Message['location'] {
  const value = parse(text);
  if (!isObject(value)) return undefined;
  return { latitude: num(value.latitude), longitude: num(value.longitude), name: str(value.name), address: str(value.address) };
}

/** One message object. */
export function messageJson(row: StoredMessage): Message {
  const [id, wamid, direction, type, text, toNumber, status, errorJson, templateJson, mediaJson, locationJson, replyTo,
    createdAt, statusUpdatedAt, history] = row;
  const message: Message = { id, wamid, direction, type, text, status, created_at: isoUtc(createdAt) };
  // Outbound messages always say whether they failed; an inbound one only when the network flagged it (unsupported).
  if (direction === 'outbound' || errorJson !== null) message.error = errorInfo(errorJson);
  if (direction === 'outbound') {
    if (toNumber !== null) message.to = toNumber;
    message.status_updated_at = statusUpdatedAt === null ? null : isoUtc(statusUpdatedAt);
    message.statuses = (history ?? []).map(([state, at, error]) => ({ status: state, at: isoUtc(at), error: errorInfo(error) }));
  }
  const templateValue = template(templateJson);
  if (templateValue) message.template = templateValue;
  const mediaValue = media(mediaJson);
  if (mediaValue) message.media = mediaValue;
  const locationValue = location(locationJson);
  if (locationValue) message.location = locationValue;
  if (replyTo !== null) message.reply_to = replyTo;
  return message;
}
