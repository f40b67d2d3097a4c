// One message by id: GET /api/message/{id} (the owner or an ADMIN), in the listing shape with its status history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { Message } from '../../schemas/conversations';
import { AppError } from '../errors';

const message: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/message/:id', {
    preValidation: app.authenticate,
    schema: {
      tags: ['messages'],
      operationId: 'getMessage',
      summary: 'One message, as listed, with its status history',
      description: 'The owner or an ADMIN; 404 `MESSAGE_NOT_FOUND` for an unknown id and for another user\'s message alike.',
      security: [{ bearer: [] }, { cookie: [] }],
      params: IdParams,
      response: { 200: Message, ...errors(400, 401, 404) },
    },
    serializerCompiler: () => (data) => (typeof data === 'string' ? data : JSON.stringify(data)),
  }, async (request, reply) => {
    const caller = request.currentUser!;
    const found = app.conversationsRepo.messageJson(request.params.id);
    // Another CLIENT learns nothing, not even whether the id exists.
    if (found === undefined || (found.userId !== caller.id && caller.role !== 'ADMIN')) {
      throw new AppError(404, 'MESSAGE_NOT_FOUND', `No message ${request.params.id}`);
    }
    return reply.type('application/json; charset=utf-8').send(found.json as never);
  });
};
export default message;
