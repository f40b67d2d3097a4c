// Sending free-form and template messages (SPEC §5, §12): POST /api/message/send and /api/message/send2.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { SessionSecurity } from '../../schemas/auth';
import { errors } from '../../schemas/common';
import {
  IdempotencyHeaders, SendAnswer, SendBadGatewayResponse, SendBody, SendStorageResponse, SendTemplateBody, UpstreamErrorResponse,
} from '../../schemas/messages';
import { freeFormMessage, templateMessage } from '../services/outbound-message';
import { sendMessage, type SendDeps, type SendOutcome } from '../services/send-message';

const messages: FastifyPluginAsyncTypebox = async (app) => {
  const deps: SendDeps = {
    writer: app.writer, messages: app.messagesRepo, credits: app.creditsRepo, idempotency: app.idempotencyRepo,
    client: app.messagingClient, tracker: app.sendTracker, timezone: app.config.timezone, now: app.now,
    openToken: app.openMessagingToken,
  };
  const schema = {
    tags: ['messages'],
    security: SessionSecurity,
    headers: IdempotencyHeaders,
    response: {
      201: SendAnswer, 429: UpstreamErrorResponse, 502: SendBadGatewayResponse, 503: SendStorageResponse,
      ...errors(400, 401, 402, 403, 409, 413, 415, 422, 504),
    },
  };
  const answer = (reply: FastifyReply, outcome: SendOutcome) => {
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(outcome.answer);
  };

  app.post('/api/message/send', {
    preValidation: app.authenticate,
    schema: { ...schema, summary: 'Send a text, media, location, contacts, interactive or reaction message', body: SendBody },
  }, async (request, reply) => {
    const outcome = await sendMessage(deps, request.currentUser!, freeFormMessage(request.body), request.headers['idempotency-key']);
    return answer(reply, outcome);
  });

  app.post('/api/message/send2', {
    preValidation: app.authenticate,
    schema: { ...schema, summary: 'Send a template message (body parameters, header, buttons)', body: SendTemplateBody },
  }, async (request, reply) => {
    const outcome = await sendMessage(deps, request.currentUser!, templateMessage(request.body), request.headers['idempotency-key']);
    return answer(reply, outcome);
  });
};
export default messages;
