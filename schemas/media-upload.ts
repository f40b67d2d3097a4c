// POST /api/media: the answer to an upload (the id to send media with).
import { Type } from '@sinclair/typebox';

export const MediaUploadAnswer = Type.Object({
  id: Type.String({ description: "The network's media id: send it as image.id, document.id …" }),
  mime_type: Type.String(),
  file_size: Type.Integer({ description: 'Bytes' }),
});

/** The multipart form of POST /api/media, for the OpenAPI document (the route reads the stream itself). */
export const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file; its Content-Type decides the kind and the size limit' }),
});
