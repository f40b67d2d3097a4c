// Media (GET /api/media/{id}): the stored file of an inbound media message.
import { Type } from '@sinclair/typebox';

export const MediaFile = Type.Unsafe<unknown>({
  type: 'string', format: 'binary',
  description: "The file's bytes, with its Content-Type, Content-Length and a Content-Disposition (inline for images, audio and "
    + 'video the browser plays; attachment, with a sandboxing Content-Security-Policy, for anything else)',
});
