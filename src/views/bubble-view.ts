// One message of the API answer -> what a chat bubble on the admin thread page shows.
import type { ErrorInfo, Message } from '../../schemas/conversations';
import { clockTime, fullTime } from '../support/time';
import { isInline, servedType } from '../services/media-disposition';

export interface Tick { cls: string; symbol: string; label: string }
export interface Bubble {
  id: number; side: 'in' | 'out'; type: string; text: string | null; time: string; fullTime: string;
  tick: Tick | null; failure: string | null; history: string | null; quote: string | null;
  template: { name: string; language: string | null; params: string[] } | null;
  attachment: {
    kind: string; label: string; details: string[];
    /** The archived file (same origin): shown as an image, played, or linked for download. */
    file: { url: string; show: 'image' | 'audio' | 'video' | 'link' } | null;
    /** Media not (yet) stored: why, in words. */
    pending: string | null;
    /** Outbound media sent by link: the link (shown as a link, never loaded by the page). */
    link: string | null;
  } | null;
}

const MEDIA_ERRORS: Record<string, string> = {
  sha256_mismatch: 'the file did not match its checksum', too_large: 'the file is over the size limit',
  lookup_refused: 'the network no longer has it', download_refused: 'the network refused the download',
  unavailable: 'the network did not answer for 24 hours', url_refused: 'the network named an unsafe address for it',
  no_space: 'the archive is full (tried again once there is room)',
};

/** How the bubble offers an archived file: only types the browser shows safely are shown or played. */
function file(media: NonNullable<Message['media']>): NonNullable<Bubble['attachment']>['file'] {
  if (!media.stored || !media.url) return null;
  const type = servedType(media.mime_type);
  const kind = type.split('/', 1)[0];
  const show = isInline(type) && (kind === 'image' || kind === 'audio' || kind === 'video') ? kind : 'link';
  return { url: media.url, show };
}

function notStored(m: Message): string | null {
  if (!m.media || m.media.stored !== false) return null;
  if (m.media.error) return `Not stored: ${MEDIA_ERRORS[m.media.error] ?? m.media.error}`;
  if (m.direction === 'inbound') return 'Not downloaded yet';
  // Sent by an upload's id: the archive fetches its copy once the network accepted the message.
  return m.status === 'pending' || m.status === 'failed' ? null : 'Not in the archive yet';
}

const TICKS: Record<string, Tick> = {
  pending: { cls: 'pending', symbol: '…', label: 'Waiting for the network' },
  accepted: { cls: 'accepted', symbol: '✓', label: 'Accepted by the network' },
  sent: { cls: 'sent', symbol: '✓', label: 'Sent' },
  delivered: { cls: 'delivered', symbol: '✓✓', label: 'Delivered' },
  read: { cls: 'read', symbol: '✓✓', label: 'Read' },
  failed: { cls: 'failed', symbol: '!', label: 'Failed' },
};

const MEDIA_LABELS: Record<string, string> = {
  image: 'Photo', video: 'Video', audio: 'Audio', document: 'Document', sticker: 'Sticker', location: 'Location', contacts: 'Contact card',
};

/** "Re-engagement message — More than 24 hours … (131047)" */
export function reason(error: ErrorInfo | null | undefined): string {
  if (!error) return 'No reason given';
  const words = [error.title, error.details].filter((w, i, all): w is string => !!w && all.indexOf(w) === i).join(' — ');
  const code = error.code === null ? '' : ` (${error.code})`;
  return (words || 'No reason given') + code;
}

function attachment(m: Message): Bubble['attachment'] {
  const label = MEDIA_LABELS[m.type];
  if (!label) return null;
  const details = m.media ? [m.media.filename, m.media.mime_type] : [];
  if (m.location) {
    const { latitude, longitude, name, address } = m.location;
    details.push(name === m.text ? null : name, address, latitude !== null && longitude !== null ? `${latitude}, ${longitude}` : null);
  }
  return {
    kind: m.type, label, details: details.filter((d): d is string => !!d), file: m.media ? file(m.media) : null, pending: notStored(m),
    link: m.media?.link && /^https?:\/\//i.test(m.media.link) ? m.media.link : null,
  };
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `quoted` finds the text of the message a reply quotes, when it is on the page. */
export function bubble(m: Message, zone: string, quoted: (wamid: string) => string | null): Bubble {
  const created = Date.parse(m.created_at);
  const history = m.statuses && m.statuses.length > 0
    ? m.statuses.map((s) => `${capitalise(s.status)} ${clockTime(Date.parse(s.at), zone)}`).join(' · ') : null;
  return {
    id: m.id,
    side: m.direction === 'inbound' ? 'in' : 'out',
    type: m.type,
    text: m.text,
    time: clockTime(created, zone),
    fullTime: fullTime(created, zone),
    tick: m.direction === 'outbound' ? TICKS[m.status] ?? null : null,
    failure: m.status === 'failed' || (m.direction === 'inbound' && m.error) ? reason(m.error) : null,
    history,
    quote: m.reply_to === undefined ? null : quoted(m.reply_to) ?? 'an earlier message',
    template: m.template ?? null,
    attachment: attachment(m),
  };
}
