// Wire items -> what the gateway stores: inbound message rows, status events, errors as {code, title, details}.
import type { NetworkInboundMessage as InboundMessage, NetworkStatus as Status } from '../../schemas/network';
import type { NewInbound, StatusEvent } from '../db/messages-repo';
import { errorInfo, fields, num, str } from '../support/loose-json';

const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document', 'sticker']);
// Where a type's readable text lives, in order of preference (text.body, image.caption, button.text …).
const TEXT_FIELDS = ['body', 'caption', 'filename', 'text', 'title', 'name', 'address'];

const firstText = (value: unknown): string | null =>
  TEXT_FIELDS.map((key) => str(fields(value)?.[key])).find((text) => text !== null) ?? null;

const unixMs = (timestamp: string): number => Number(timestamp) * 1000;

/** The first error of a network `errors` array as `{code, title, details}` JSON, or null. */
export function errorJson(errors: unknown): string | null {
  const info = Array.isArray(errors) ? errorInfo(errors) : null;
  return info && JSON.stringify(info);
}

/** Readable text of any message type; null when it has none (image without caption, removed reaction …). */
function readableText(message: InboundMessage): string | null {
  switch (message.type) {
    case 'interactive': {
      const interactive = fields(message.interactive);
      return firstText(interactive?.[String(interactive?.type)]);
    }
    case 'reaction':
      return str(fields(message.reaction)?.emoji);
    case 'contacts': {
      const cards = Array.isArray(message.contacts) ? message.contacts : [];
      const names = cards.map((card) => str(fields(fields(card)?.name)?.formatted_name)).filter((n) => n !== null);
      return names.length > 0 ? names.join(', ') : null;
    }
    default:
      return firstText(message[message.type]);
  }
}

function mediaJson(message: InboundMessage): string | null {
  const media = MEDIA_TYPES.has(message.type) ? fields(message[message.type]) : undefined;
  if (!media) return null;
  return JSON.stringify({ id: str(media.id), mime_type: str(media.mime_type), sha256: str(media.sha256), filename: str(media.filename) });
}

function locationJson(message: InboundMessage): string | null {
  const location = message.type === 'location' ? fields(message.location) : undefined;
  if (!location) return null;
  const [latitude, longitude] = [num(location.latitude), num(location.longitude)];
  if (latitude === null || longitude === null) return null;
  return JSON.stringify({ latitude, longitude, name: str(location.name), address: str(location.address) });
}

/** The stored row of an inbound message; a reaction points `reply_to` at the message it reacts to. */
export function inboundRow(message: InboundMessage, userId: number, contactName: string | null): NewInbound {
  return {
    userId, contactWaId: message.from, contactName, wamid: message.id, type: message.type,
    text: readableText(message), payloadJson: JSON.stringify(message),
    mediaJson: mediaJson(message), locationJson: locationJson(message),
    replyTo: str(fields(message.context)?.id) ?? str(fields(message.reaction)?.message_id),
    errorJson: errorJson(message.errors), createdAt: unixMs(message.timestamp),
  };
}

/** A callback status (any, ranked or not: `played`, `deleted` … join the history) with the network's own time and error. */
export function statusEvent(status: Status): StatusEvent {
  return { status: status.status, at: unixMs(status.timestamp), errorJson: errorJson(status.errors) };
}

/** The profile name `value.contacts` gives for `waId`. */
export function contactName(contacts: unknown, waId: string): string | null {
  const contact = (Array.isArray(contacts) ? contacts : []).map(fields).find((c) => c?.wa_id === waId);
  return str(fields(contact?.profile)?.name);
}
