// POST /api/media: the network's media kinds and size limits, and the answer to an upload (the id to send media with).
import { Type } from '@sinclair/typebox';
import { ErrorResponse } from './common';
import { Upstream } from './messages';

const KiB = 1024;
const MiB = 1024 * KiB;
const OFFICE = ['application/msword', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint',
  ...['wordprocessingml.document', 'spreadsheetml.sheet', 'presentationml.presentation'].map((t) => `application/vnd.openxmlformats-officedocument.${t}`)];
/** The network's media kinds by MIME type, with its size limit for each. */
export const UPLOAD_KINDS: Record<string, { kind: 'image' | 'sticker' | 'audio' | 'video' | 'document'; limit: number }> = Object.fromEntries([
  ...['image/jpeg', 'image/png'].map((t) => [t, { kind: 'image', limit: 5 * MiB }]),
  ['image/webp', { kind: 'sticker', limit: 500 * KiB }],
  ...['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'].map((t) => [t, { kind: 'audio', limit: 16 * MiB }]),
  ...['video/mp4', 'video/3gpp'].map((t) => [t, { kind: 'video', limit: 16 * MiB }]),
  ...['text/plain', 'application/pdf', ...OFFICE].map((t) => [t, { kind: 'document', limit: 100 * MiB }]),
]);
export const MAX_UPLOAD_BYTES = Math.max(...Object.values(UPLOAD_KINDS).map((k) => k.limit));


export const MediaUploadAnswer = Type.Object({
  id: Type.String({ description: "The network's media id: send it as image.id, document.id …" }),
  mime_type: Type.String(),
  file_size: Type.Integer({ description: 'Bytes' }),
});

/** The multipart form of POST /api/media, for the OpenAPI document (the route reads the stream itself). */
export const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file; its Content-Type decides the kind and the size limit' }),
});

/** 429: the network's rate limit (MESSAGING_RATE_LIMITED, with `upstream`) or this user's uploads at once (TOO_MANY_UPLOADS). */
export const UploadTooManyResponse = Type.Composite([ErrorResponse, Type.Object({ upstream: Type.Optional(Upstream) })], {
  title: 'UploadTooManyResponse',
  description: 'MESSAGING_RATE_LIMITED with the network\'s error in `upstream`, or TOO_MANY_UPLOADS (at most 2 uploads at once per user)',
});
