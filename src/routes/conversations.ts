// GET /api/user/{id}/conversations: a user's conversations as JSON (SPEC §7), for the user itself or an ADMIN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { ConversationList, ConversationsQuery } from '../../schemas/conversations';
import { forbidden, userNotFound } from '../errors';
import { listConversations } from '../services/conversations';

const conversations: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/user/:id/conversations', {
    preValidation: app.authenticate,
    schema: {
      tags: ['conversations'],
      summary: "A user's conversations, newest first, each with its latest 200 matching messages; at most 5,000 messages per answer (continue with `before`)",
      security: [{ bearer: [] }, { cookie: [] }],
      params: IdParams,
      querystring: ConversationsQuery,
      response: { 200: ConversationList, ...errors(400, 401, 403, 404) },
    },
    // Up to 200 × 200 messages: the schema documents the answer (and the tests check it), but its compiled
    // serializer takes twice as long as JSON.stringify on it. Every object in the answer is built field by field.
    serializerCompiler: () => (data) => JSON.stringify(data),
  }, async (request) => {
    const caller = request.currentUser!;
    const { id } = request.params;
    // Another CLIENT learns nothing, not even whether the id exists.
    if (caller.id !== id && caller.role !== 'ADMIN') throw forbidden('You may only read your own conversations');
    if (!app.usersRepo.findById(id)) throw userNotFound();
    return listConversations(app.conversationsRepo, id, request.query, app.now(), app.config.timezone);
  });
};
export default conversations;
