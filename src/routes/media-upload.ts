// POST /api/media (SPEC §12): one multipart `file` part, streamed to the user's network account; multipart only in this scope.
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors } from '../../schemas/common';
import { MAX_UPLOAD_BYTES, MediaUploadAnswer, UploadForm, UploadTooManyResponse } from '../../schemas/media-upload';
import { SendBadGatewayResponse } from '../../schemas/messages';
import { AppError } from '../errors';
import { createUploadTurns, paced, type UploadFairness } from '../services/upload-fairness';
import { uploadMedia, type UploadedMedia } from '../services/upload-media';

const ONE_FILE = 'Send multipart/form-data with exactly one part: the file, named "file"';
/** The multipart parser's own errors, as our answers. */
const MULTIPART_ERRORS: Record<string, () => AppError> = {
  FST_PARTS_LIMIT: () => new AppError(400, 'VALIDATION_ERROR', ONE_FILE),
  FST_FILES_LIMIT: () => new AppError(400, 'VALIDATION_ERROR', ONE_FILE),
  FST_FIELDS_LIMIT: () => new AppError(400, 'VALIDATION_ERROR', ONE_FILE),
  FST_REQ_FILE_TOO_LARGE: () => new AppError(413, 'PAYLOAD_TOO_LARGE', `file: over ${MAX_UPLOAD_BYTES} bytes`),
};

const mediaUpload: FastifyPluginAsyncTypebox<UploadFairness> = async (app, fairness) => {
  // Registered here only: every other route keeps the JSON-only rule. Limits stop a body that is not one file early.
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES + 1, files: 1, fields: 0, parts: 1, headerPairs: 20 } });
  const deps = { uploader: app.mediaUploader, openToken: app.openMessagingToken };
  const turns = fairness.turns ?? createUploadTurns();

  app.post('/api/media', {
    preValidation: app.authenticate,
    // Streamed to the network chunk by chunk: not counted in the in-memory body budget (see plugins/slow-clients.ts).
    // The body is documented only (a file part): Fastify never parses or validates it as JSON.
    config: {
      streamsBody: true,
      swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: UploadForm }, url }),
    },
    schema: {
      tags: ['media'], operationId: 'uploadMedia', summary: 'Upload a file to send as media', security: SessionSecurity,
      description: 'multipart/form-data with one part named `file`. The kind follows from the part\'s Content-Type: image (image/jpeg, image/png) 5 MiB; sticker (image/webp) 500 KiB; '
        + 'audio (audio/aac, audio/amr, audio/mpeg, audio/mp4, audio/ogg) and video (video/mp4, video/3gpp) 16 MiB; document (text/plain, '
        + 'application/pdf, Microsoft Office and OpenXML types) 100 MiB. Uses no credit. At most 2 uploads at once per user '
        + '(429 `TOO_MANY_UPLOADS` with Retry-After beyond); an upload sending less than 16 KB/s over 10 s is stopped (408 `UPLOAD_TOO_SLOW`).',
      consumes: ['multipart/form-data'],
      response: { 201: MediaUploadAnswer, 429: UploadTooManyResponse, 502: SendBadGatewayResponse, ...errors(400, 401, 403, 408, 409, 413, 415, 504) },
    },
  }, async (request, reply) => {
    if (!request.isMultipart()) throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', ONE_FILE);
    const leave = turns.enter(request.currentUser!.id);
    let uploaded: UploadedMedia | undefined;
    try {
      for await (const part of request.parts()) {
        if (uploaded !== undefined || part.type !== 'file' || part.fieldname !== 'file') throw new AppError(400, 'VALIDATION_ERROR', ONE_FILE);
        const stream = paced(part.file, fairness.pace);
        uploaded = await uploadMedia(deps, request.currentUser!, { stream, mimeType: part.mimetype, filename: part.filename });
      }
    } catch (error) {
      const mapped = MULTIPART_ERRORS[(error as { code?: string }).code ?? ''];
      if (mapped) throw mapped();
      if (error instanceof AppError) throw error;
      request.log.info({ code: (error as { code?: string }).code }, 'malformed multipart body');
      throw new AppError(400, 'BAD_REQUEST', 'The multipart/form-data body could not be read');
    } finally {
      leave();
    }
    if (uploaded === undefined) throw new AppError(400, 'VALIDATION_ERROR', ONE_FILE);
    return reply.code(201).send(uploaded);
  });
};
export default mediaUpload;
