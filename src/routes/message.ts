// One message by id: GET /api/message/{id} (the owner or an ADMIN), in the listing shape with its status history, and
// POST /api/message/{id}/read (the owner): an inbound message marked read at the network.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams } from '../../schemas/common';
import { Message } from '../../schemas/conversations';
import { MarkReadAnswer, MarkReadBody, UpstreamErrorResponse } from '../../schemas/messages';
import { AppError } from '../errors';
import { markRead } from '../services/mark-read';

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

  app.post('/api/message/:id/read', {
    preValidation: app.authenticate,
    schema: {
      tags: ['messages'],
      operationId: 'markMessageRead',
      summary: 'Mark an inbound message read, optionally showing a typing indicator',
      description: 'The owner only; no credit. 404 `MESSAGE_NOT_FOUND` for an unknown, outbound or another user\'s message; 409 '
        + '`MESSAGING_NOT_CONFIGURED`; 429 `MESSAGING_RATE_LIMITED` and 502 `MESSAGING_REJECTED` carry the network\'s error in `upstream`; '
        + '504 `MESSAGING_UNAVAILABLE` (the network did not answer in time).',
      security: SessionSecurity,
      params: IdParams,
      body: MarkReadBody,
      response: { 200: MarkReadAnswer, 429: UpstreamErrorResponse, 502: UpstreamErrorResponse, ...errors(400, 401, 404, 409, 415, 504) },
    },
  }, async (request) => {
    const typing = request.body?.typing_indicator ?? false;
    const deps = { messages: app.messagesRepo, client: app.messagingClient, openToken: app.openMessagingToken };
    const wamid = await markRead(deps, request.currentUser!, request.params.id, typing);
    return { id: request.params.id, wamid, typing_indicator: typing };
  });
};
export default message;
