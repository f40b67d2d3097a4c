// How a stored media file is served: its Content-Type, whether it may show inline, and an RFC 6266
// Content-Disposition whose filename carries no path, quote or control character (the name comes from the sender).

/** Types a browser shows as an image, a player or nothing at all: never a document that runs script. */
const INLINE = new Set(['image/jpeg', 'image/png', 'image/webp', 'audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg',
  'video/mp4', 'video/3gpp']);
const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'audio/aac': 'aac', 'audio/amr': 'amr', 'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a', 'audio/ogg': 'ogg', 'video/mp4': 'mp4', 'video/3gpp': '3gp', 'application/pdf': 'pdf', 'text/plain': 'txt',
};
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The type's `type/subtype`, lower-cased, when well-formed; else application/octet-stream. */
export function servedType(mimeType: string | null): string {
  const base = (mimeType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return MIME.test(base) ? base : 'application/octet-stream';
}

export const isInline = (type: string): boolean => INLINE.has(type);

/** The sender's name reduced to its last path segment, without control characters, quotes or separators. */
export function safeFilename(name: string | null, fallback: string): string {
  const last = (name ?? '').split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = last.replace(/[\u0000-\u001f\u007f-\u009f"'`;%*<>|?:\u2028\u2029]/g, '').replace(/^[\s.]+|[\s.]+$/g, '').slice(0, 150);
  return cleaned === '' ? fallback : cleaned;
}

/** RFC 5987 value: UTF-8, percent-encoded beyond the attr-chars. */
const extValue = (name: string): string =>
  encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `inline` or `attachment`, with `filename` (ASCII) and, for other characters, `filename*`. */
export function contentDisposition(type: string, filename: string | null, messageId: number, kind: string): string {
  const name = safeFilename(filename, `${kind}-${messageId}${EXTENSIONS[type] ? `.${EXTENSIONS[type]}` : ''}`);
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/\\/g, '_');
  const disposition = isInline(type) ? 'inline' : 'attachment';
  return ascii === name ? `${disposition}; filename="${name}"` : `${disposition}; filename="${ascii}"; filename*=UTF-8''${extValue(name)}`;
}
