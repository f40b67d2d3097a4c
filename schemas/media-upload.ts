// POST /api/media: the answer to an upload (the id to send media with).
import { Type } from '@sinclair/typebox';

export const MediaUploadAnswer = Type.Object({
  id: Type.String({ description: "The network's media id: send it as image.id, document.id …" }),
  mime_type: Type.String(),
  file_size: Type.Integer({ description: 'Bytes' }),
});
