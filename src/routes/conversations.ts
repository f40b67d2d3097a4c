// GET /api/user/{id}/conversations: a user's conversations as JSON (SPEC §7), for the user itself or an ADMIN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { ContactMessagesPage, ContactMessagesParams, ContactMessagesQuery, ConversationList, ConversationsQuery } from '../../schemas/conversations';
import { AppError, forbidden, userNotFound } from '../errors';

const conversations: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/user/:id/conversations', {
    preValidation: app.authenticate,
    schema: {
      tags: ['conversations'],
      operationId: 'listConversations',
      summary: "List a user's conversations",
      description: 'Newest first, each with its latest 200 matching messages; at most 5,000 messages per answer (continue with `before`). '
        + 'A CLIENT may read only its own (403 otherwise); 404 `USER_NOT_FOUND`.',
      security: [{ bearer: [] }, { cookie: [] }],
      params: IdParams,
      querystring: ConversationsQuery,
      response: { 200: ConversationList, ...errors(400, 401, 403, 404) },
    },
    // The answer leaves the service as JSON bytes joined from each message's stored JSON: the schema documents it
    // (and the tests validate answers against it), no serializer is compiled from it. Bytes pass as they are (Fastify
    // would serialise a buffer over shared memory, which it does not take for bytes).
    serializerCompiler: () => (data) => (Buffer.isBuffer(data) ? data as unknown as string : JSON.stringify(data)),
  }, async (request, reply) => {
    const caller = request.currentUser!;
    const { id } = request.params;
    // Another CLIENT learns nothing, not even whether the id exists.
    if (caller.id !== id && caller.role !== 'ADMIN') throw forbidden('You may only read your own conversations');
    // The caller's own row was read by the authentication of this request.
    if (caller.id !== id && !app.usersRepo.findById(id)) throw userNotFound();
    // A client that goes away while its listing waits or runs: nothing is sent, and its answer slot and turn free at once.
    const gone = new AbortController();
    const leave = () => gone.abort();
    reply.raw.once('close', leave);
    let listing;
    try {
      listing = await app.conversationsReader.list(id, request.query, app.now(), gone.signal);
    } catch (error) {
      if (gone.signal.aborted) return reply.hijack();
      throw error;
    } finally {
      reply.raw.off('close', leave);
    }
    if (gone.signal.aborted) {
      listing.done();
      return reply.hijack();
    }
    // Bytes are sent as they are. The answer's memory is reused once the response is over (sent, or the client went away).
    reply.raw.once('close', listing.done);
    return reply.type('application/json; charset=utf-8').send(listing.bytes as never);
  });

  app.get('/api/user/:id/conversations/:contact_id/messages', {
    preValidation: app.authenticate,
    schema: {
      tags: ['conversations'],
      operationId: 'listContactMessages',
      summary: 'Every message of one conversation, paged by message id',
      description: 'Oldest first by message id, the order messages were stored in: a late message with an old timestamp comes after '
        + 'what was read before it. Without a cursor, the latest `limit`; `before_id` pages back, `after_id` forward (not both: 400). '
        + 'A CLIENT may read only its own (403 otherwise); 404 `USER_NOT_FOUND`; 404 `CONTACT_NOT_FOUND` (not one of this user\'s contacts).',
      security: [{ bearer: [] }, { cookie: [] }],
      params: ContactMessagesParams,
      querystring: ContactMessagesQuery,
      response: { 200: ContactMessagesPage, ...errors(400, 401, 403, 404) },
    },
    serializerCompiler: () => (data) => (typeof data === 'string' ? data : JSON.stringify(data)),
  }, async (request, reply) => {
    const caller = request.currentUser!;
    const { id, contact_id: contactId } = request.params;
    const { before_id: beforeId, after_id: afterId, limit } = request.query;
    if (caller.id !== id && caller.role !== 'ADMIN') throw forbidden('You may only read your own conversations');
    if (beforeId !== undefined && afterId !== undefined) throw new AppError(400, 'VALIDATION_ERROR', 'Give before_id or after_id, not both');
    if (caller.id !== id && !app.usersRepo.findById(id)) throw userNotFound();
    if (!app.contacts.byId(id, contactId)) throw new AppError(404, 'CONTACT_NOT_FOUND', `This user has no contact ${contactId}`);
    const page = app.conversationsRepo.conversationMessages(id, contactId, { beforeId, afterId, limit });
    return reply.type('application/json; charset=utf-8')
      .send(`{"messages":[${page.messages.join(',')}],"next_before_id":${page.nextBeforeId},"next_after_id":${page.nextAfterId}}` as never);
  });
};
export default conversations;
