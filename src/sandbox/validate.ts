// The network's checks of a `/messages` body: the send surface or a mark-read, JSON-encoded fields decoded, the bad field named.
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  LIST_ROWS_MAX, NetworkMarkReadRequest, NetworkSendRequests, type NetworkMarkReadRequest as MarkRead,
  type NetworkMessageType, type NetworkSendRequest,
} from '../../schemas/network';
import { MESSAGING_PRODUCT } from '../../schemas/network';

export type Checked =
  | { ok: true; kind: 'send'; body: NetworkSendRequest }
  | { ok: true; kind: 'read'; body: MarkRead }
  | { ok: false; details: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The Graph API takes an object- or array-valued field as a JSON-encoded string too (some SDKs send `contacts` so):
 * where the schema wants an object or an array and the body has a string, the string is decoded. Strings the
 * schema wants as strings (a text body "[1]") stay strings.
 */
export function decodeJsonFields(schema: TSchema, value: unknown): unknown {
  const kind = schema[Kind];
  if (kind === 'Union') {
    const members = schema.anyOf as TSchema[];
    if (members.some((m) => m[Kind] === 'String') && typeof value === 'string') return value;
    const tries = members.map((m) => decodeJsonFields(m, value));
    return tries.find((v, i) => Value.Check(members[i]!, v)) ?? tries.find((v) => typeof v !== 'string') ?? value;
  }
  if ((kind === 'Object' || kind === 'Array') && typeof value === 'string') {
    const decoded = parsed(value);
    if (kind === 'Object' ? isRecord(decoded) : Array.isArray(decoded)) value = decoded;
  }
  if (kind === 'Object' && isRecord(value)) {
    const properties = schema.properties as Record<string, TSchema>;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, properties[k] ? decodeJsonFields(properties[k], v) : v]));
  }
  if (kind === 'Array' && Array.isArray(value)) return value.map((item) => decodeJsonFields(schema.items as TSchema, item));
  return value;
}

/** `template.components[0].parameters`: the field as the network's details name it. */
const fieldName = (path: string): string =>
  path.replace(/^\//, '').split('/').map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : (i === 0 ? p : `.${p}`))).join('');

/** The member of a union the value means: the one whose `type` it names, else the one whose required fields it has (id or link). */
function meantMember(union: TSchema, value: Record<string, unknown>): TSchema | undefined {
  const members = union.anyOf as TSchema[];
  return members.find((m) => m.properties?.type?.const !== undefined && m.properties.type.const === value.type)
    ?? members.find((m) => m.properties?.type === undefined && (m.required as string[] | undefined)?.every((key) => key in value));
}

/** The first error, looked for inside the union member the value means (so it names the field, not "union value"). */
function firstError(schema: TSchema, body: unknown, base = ''): string | undefined {
  const error = Value.Errors(schema, body).First();
  if (!error) return undefined;
  const member = error.schema[Kind] === 'Union' && isRecord(error.value) ? meantMember(error.schema, error.value) : undefined;
  const inner = member && firstError(member, error.value, base + error.path);
  return inner ?? `${fieldName(base + error.path) || 'body'}: ${error.message}`;
}

const isMessageType = (type: unknown): type is NetworkMessageType => typeof type === 'string' && Object.hasOwn(NetworkSendRequests, type);

/** Checks a parsed body as the network does; `details` names the first bad field. */
export function checkMessagesBody(raw: unknown): Checked {
  if (!isRecord(raw)) return { ok: false, details: 'body: expected a JSON object' };
  if (raw.messaging_product !== MESSAGING_PRODUCT) return { ok: false, details: `messaging_product: expected "${MESSAGING_PRODUCT}"` };
  if ('status' in raw) {
    const error = firstError(NetworkMarkReadRequest, raw);
    return error ? { ok: false, details: error } : { ok: true, kind: 'read', body: raw as MarkRead };
  }
  const type = raw.type ?? 'text';
  if (!isMessageType(type)) return { ok: false, details: `type: unsupported message type ${JSON.stringify(type)}` };
  const schema = NetworkSendRequests[type];
  const body = decodeJsonFields(schema, { ...raw, type });
  const error = firstError(schema, body);
  if (error) return { ok: false, details: error };
  const checked = body as NetworkSendRequest;
  if (checked.type === 'interactive' && checked.interactive.type === 'list') {
    const rows = checked.interactive.action.sections.reduce((n, s) => n + s.rows.length, 0);
    if (rows > LIST_ROWS_MAX) return { ok: false, details: `interactive.action.sections: ${rows} rows, at most ${LIST_ROWS_MAX} in all sections together` };
  }
  return { ok: true, kind: 'send', body: checked };
}
