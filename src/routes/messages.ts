// Sending text and template messages (SPEC §5): POST /api/message/send and /api/message/send2.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { SessionSecurity } from '../../schemas/auth';
import { errors } from '../../schemas/common';
import {
  IdempotencyHeaders, SendAnswer, SendBadGatewayResponse, SendStorageResponse, SendTemplateBody, SendTextBody, UpstreamErrorResponse,
} from '../../schemas/messages';
import { AppError } from '../errors';
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
  /** Counts the send's outcome (metrics): accepted, replayed, or the error code answered. */
  const counted = async (sending: Promise<SendOutcome>): Promise<SendOutcome> => {
    try {
      const outcome = await sending;
      app.metrics.sendOutcome(outcome.replayed ? 'replayed' : 'accepted');
      return outcome;
    } catch (error) {
      app.metrics.sendOutcome(error instanceof AppError ? error.code : 'INTERNAL_ERROR');
      throw error;
    }
  };
  const answer = (reply: FastifyReply, outcome: SendOutcome) => {
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(outcome.answer);
  };

  app.post('/api/message/send', {
    preValidation: app.authenticate,
    schema: { ...schema, summary: 'Send a text message', body: SendTextBody },
  }, async (request, reply) => {
    const { to, text } = request.body;
    const outcome = await counted(sendMessage(deps, request.currentUser!, { kind: 'text', to, body: text.body }, request.headers['idempotency-key']));
    return answer(reply, outcome);
  });

  app.post('/api/message/send2', {
    preValidation: app.authenticate,
    schema: { ...schema, summary: 'Send a template message', body: SendTemplateBody },
  }, async (request, reply) => {
    const { to, template_name: name, language, param1, param2, param3, param4, param5 } = request.body;
    const params = [param1, param2, param3, param4, param5].filter((p): p is string => p !== undefined);
    const outcome = await counted(sendMessage(deps, request.currentUser!, { kind: 'template', to, name, language, params }, request.headers['idempotency-key']));
    return answer(reply, outcome);
  });
};
export default messages;
