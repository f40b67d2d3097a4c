// GET /api/media/{id}: the archived file of a media message (inbound, or sent by an upload's id), for its owner or an ADMIN.
import { open, stat } from 'node:fs/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { MediaFile } from '../../schemas/media';
import { AppError } from '../errors';
import { fields, parseJsonOrUndefined, str } from '../support/loose-json';
import { contentDisposition, isInline, servedType } from '../services/media-disposition';

const messageNotFound = () => new AppError(404, 'MESSAGE_NOT_FOUND', 'Message not found');
const notStored = () => new AppError(404, 'MEDIA_NOT_STORED', 'This message has no stored media (not downloaded yet, failed, or no media)');

const media: FastifyPluginAsyncTypebox = async (app) => {
  // GET and HEAD declared together: a HEAD answers the same headers from the file's size and never opens it
  // (Fastify's own HEAD route would read the whole stream only to discard it).
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/media/:id',
    preValidation: app.authenticate,
    schema: {
      tags: ['media'],
      operationId: 'getMedia',
      summary: 'The stored file of a media message',
      description: '`{id}` is the message id; for the message owner or an ADMIN (another user\'s message answers 404 `MESSAGE_NOT_FOUND`, as a missing one does). Answered once the gateway has downloaded the file from the network (in the background, after the message '
        + 'arrived, or after the network accepted a message sent by the id of an upload): until then, and after a failed download, 404 MEDIA_NOT_STORED. Images, audio and video of the common types '
        + 'are served inline; anything else as an attachment that the browser never runs. HEAD answers the same headers without reading the file.',
      security: [{ bearer: [] }, { cookie: [] }],
      params: IdParams,
      response: {
        200: { description: 'The file', content: { 'application/octet-stream': { schema: MediaFile } } },
        ...errors(400, 401, 403, 404),
      },
    },
    handler: async (request, reply) => {
      const caller = request.currentUser!;
      const { id } = request.params;
      const message = app.mediaRepo.ofMessage(id);
      // Another CLIENT's message answers exactly like a missing one: ids are sequential, and a 403 would confirm it exists.
      if (!message || (message.userId !== caller.id && caller.role !== 'ADMIN')) throw messageNotFound();
      if (message.state !== 'stored') throw notStored();
      const head = request.method === 'HEAD';
      let file;
      let size;
      try {
        if (head) size = (await stat(app.mediaFiles.path(id))).size;
        else {
          file = await open(app.mediaFiles.path(id), 'r');
          size = (await file.stat()).size;
        }
      } catch {
        await file?.close();
        throw notStored();
      }
      const type = servedType(message.mimeType);
      const stored = fields(parseJsonOrUndefined(message.mediaJson ?? ''));
      reply.header('content-type', type).header('content-length', String(size)).header('x-content-type-options', 'nosniff')
        .header('content-disposition', contentDisposition(type, str(stored?.filename), id, message.type));
      // Anything not shown as an image or played: a download the browser must never run as a page of this origin.
      if (!isInline(type)) reply.header('content-security-policy', "sandbox; default-src 'none'");
      return reply.send(file?.createReadStream());
    },
  });
};
export default media;
