// Wire items -> what the gateway stores: inbound message rows, status events, errors as {code, title, details}.
import type { NetworkInboundMessage as InboundMessage, NetworkStatus as Status } from '../../schemas/network';
import type { ContactRef, NewInbound, StatusEvent } from '../db/messages-repo';
import { errorInfo, fields, num, str } from '../support/loose-json';

const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document', 'sticker']);
// Where a type's readable text lives, in order of preference (text.body, image.caption, button.text …).
const TEXT_FIELDS = ['body', 'caption', 'filename', 'text', 'title', 'name', 'address'];

const firstText = (value: unknown): string | null =>
  TEXT_FIELDS.map((key) => str(fields(value)?.[key])).find((text) => text !== null) ?? null;

/** The network's `timestamp`: unix seconds, or milliseconds when it is 10^12 or more. */
export const unixMs = (timestamp: string): number => {
  const n = Number(timestamp);
  return n >= 1e12 ? n : n * 1000;
};

/** A contact card's name: `name.formatted_name`, else the FN line of its `vcard`. */
function cardName(card: unknown): string | null {
  const c = fields(card);
  const formatted = str(fields(c?.name)?.formatted_name);
  if (formatted !== null) return formatted;
  const vcard = str(c?.vcard);
  return vcard?.split(/\r?\n/).find((line) => /^FN[:;]/i.test(line))?.replace(/^FN[^:]*:/i, '').trim() || null;
}

/** The readable text of an interactive reply: the button/list title, a flow's (`nfm_reply`) body or name, a call permission answer. */
function interactiveText(interactive: Record<string, unknown> | undefined): string | null {
  const kind = String(interactive?.type);
  const reply = fields(interactive?.[kind]);
  if (kind === 'nfm_reply') return str(reply?.body) ?? (str(reply?.name) === null ? 'Form sent' : `Form sent: ${str(reply?.name)}`);
  if (kind === 'call_permission_reply') return callPermissionText(reply);
  return firstText(reply);
}

function callPermissionText(reply: Record<string, unknown> | undefined): string {
  const answer = str(reply?.response);
  if (answer === 'accept') return reply?.is_permanent === true ? 'Call permission granted (permanently)' : 'Call permission granted';
  if (answer === 'reject') return 'Call permission declined';
  return 'Call permission answer';
}

/** The first error of a network `errors` array as `{code, title, details}` JSON, or null. */
export function errorJson(errors: unknown): string | null {
  const info = Array.isArray(errors) ? errorInfo(errors) : null;
  return info && JSON.stringify(info);
}

/** A system message without a body: what changed, in words. */
function systemText(system: Record<string, unknown> | undefined): string | null {
  const type = str(system?.type);
  if (type === 'user_changed_number') return `Changed their number to +${str(system?.wa_id) ?? str(system?.new_wa_id) ?? '?'}`;
  if (type === 'user_changed_user_id') return `Their user id changed from ${str(system?.previous_user_id) ?? '?'} to ${str(system?.user_id) ?? '?'}`;
  return type;
}

/** Readable text of any message type; null when it has none (image without caption, removed reaction …). */
export function readableText(message: InboundMessage): string | null {
  switch (message.type) {
    case 'interactive':
      return interactiveText(fields(message.interactive));
    case 'call_permission_reply':
      return callPermissionText(fields(message.call_permission_reply));
    case 'request_welcome':
      return 'Opened the chat (welcome message requested)';
    case 'system':
      return str(fields(message.system)?.body) ?? systemText(fields(message.system));
    case 'reaction':
      return str(fields(message.reaction)?.emoji);
    case 'contacts': {
      const cards = Array.isArray(message.contacts) ? message.contacts : [];
      const names = cards.map(cardName).filter((n) => n !== null);
      return names.length > 0 ? names.join(', ') : null;
    }
    default:
      return firstText(message[message.type]);
  }
}

export function mediaJson(message: InboundMessage): string | null {
  const media = MEDIA_TYPES.has(message.type) ? fields(message[message.type]) : undefined;
  if (!media) return null;
  return JSON.stringify({ id: str(media.id), mime_type: str(media.mime_type), sha256: str(media.sha256), filename: str(media.filename) });
}

export function locationJson(message: InboundMessage): string | null {
  const location = message.type === 'location' ? fields(message.location) : undefined;
  if (!location) return null;
  const [latitude, longitude] = [num(location.latitude), num(location.longitude)];
  if (latitude === null || longitude === null) return null;
  return JSON.stringify({ latitude, longitude, name: str(location.name), address: str(location.address) });
}

/** The stored row of an inbound message; a reaction points `reply_to` at the message it reacts to. */
export function inboundRow(message: InboundMessage, userId: number, contact: ContactRef): NewInbound {
  return {
    userId, contact, wamid: message.id, type: message.type,
    text: readableText(message), payloadJson: JSON.stringify(message),
    mediaJson: mediaJson(message), locationJson: locationJson(message),
    replyTo: str(fields(message.context)?.id) ?? str(fields(message.reaction)?.message_id),
    errorJson: errorJson(message.errors), createdAt: unixMs(message.timestamp),
  };
}

/** A callback status (any, ranked or not: `played`, `deleted` … join the history) with the network's own time and error. */
export function statusEvent(status: Status): StatusEvent {
  const pricing = fields(status.pricing);
  return { status: status.status, at: unixMs(status.timestamp), errorJson: errorJson(status.errors), pricingJson: pricing ? JSON.stringify(pricing) : null };
}
