// Sending free-form and template messages (SPEC §5, §12): POST /api/message/send and /api/message/send2.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { SessionSecurity } from '../../schemas/auth';
import { ErrorResponse, errors, withHeaders } from '../../schemas/common';
import {
  IdempotencyHeaders, SendAnswer, SendBadGatewayResponse, SendBody, SendStorageResponse, SendTemplateBody, UpstreamErrorResponse,
} from '../../schemas/messages';
import { AppError } from '../errors';
import { freeFormMessage, templateMessage } from '../services/outbound-message';
import { sendMessage, type SendDeps, type SendOutcome } from '../services/send-message';
import { recipientOf } from '../services/send-recipient';

const messages: FastifyPluginAsyncTypebox = async (app) => {
  const deps: SendDeps = {
    writer: app.writer, messages: app.messagesRepo, credits: app.creditsRepo, idempotency: app.idempotencyRepo,
    client: app.messagingClient, contacts: app.contacts, tracker: app.sendTracker, timezone: app.config.timezone, now: app.now,
    openToken: app.openMessagingToken,
  };
  const schema = {
    tags: ['messages'],
    security: SessionSecurity,
    headers: IdempotencyHeaders,
    response: {
      201: withHeaders(SendAnswer, {
        'idempotent-replayed': Type.Literal('true', { description: 'Present on a repeat with the same Idempotency-Key and body: the first answer again, no new send' }),
      }),
      429: withHeaders(UpstreamErrorResponse, { 'retry-after': Type.Integer({ description: 'Seconds to wait before retrying' }) }),
      502: SendBadGatewayResponse,
      503: withHeaders(SendStorageResponse, { 'retry-after': Type.Integer({ description: 'Seconds to wait before retrying' }) }),
      ...errors(400, 401, 402, 403, 404, 413, 415, 422, 504),
      409: withHeaders(ErrorResponse, { 'retry-after': Type.Integer({ description: 'With `IDEMPOTENCY_KEY_IN_USE`: seconds to wait' }) }),
    },
  };
  /** Counts the send's outcome (metrics): accepted, replayed (a repeated success or failure), or the error code answered. */
  const counted = async (sending: Promise<SendOutcome>): Promise<SendOutcome> => {
    try {
      const outcome = await sending;
      app.metrics.sendOutcome(outcome.replayed ? 'replayed' : 'accepted');
      return outcome;
    } catch (error) {
      const replayed = error instanceof AppError && error.headers?.['idempotent-replayed'] === 'true';
      app.metrics.sendOutcome(replayed ? 'replayed' : error instanceof AppError ? error.code : 'INTERNAL_ERROR');
      throw error;
    }
  };
  const description = 'Takes one credit of this month. Errors: 400 when the body names no recipient or more than one (`to`, `recipient`, `contact_id`); 404 `CONTACT_NOT_FOUND` (`contact_id` is not one of yours); 402 `CREDITS_EXHAUSTED`; 409 `MESSAGING_NOT_CONFIGURED` (no token or '
    + 'phone number id for this account) or `IDEMPOTENCY_KEY_IN_USE` (a request with this key is still running); 422 '
    + '`IDEMPOTENCY_KEY_REUSED` (same key, another body); 429 `MESSAGING_RATE_LIMITED` and 502 `MESSAGING_REJECTED` carry the '
    + 'network\'s error in `upstream`; 502 `MESSAGING_OUTCOME_UNKNOWN` (a request with this key stopped before its outcome was stored: '
    + 'its message `id`); 503 `STORAGE_UNAVAILABLE` (with `sent: true` and the `wamid` when the network accepted it: do not send again); 504 `MESSAGING_UNAVAILABLE` (the network did not answer in time).';
  const answer = (reply: FastifyReply, outcome: SendOutcome) => {
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(outcome.answer);
  };

  app.post('/api/message/send', {
    preValidation: app.authenticate,
    schema: {
      ...schema, operationId: 'sendMessage', summary: 'Send a text, media, location, contacts, interactive, reaction or template', description, body: SendBody,
    },
  }, async (request, reply) => {
    const user = request.currentUser!;
    const recipient = recipientOf(request.body, user.id, app.contacts);
    const outcome = await counted(sendMessage(deps, user, freeFormMessage(request.body, recipient), request.headers['idempotency-key'], recipient.contactId));
    return answer(reply, outcome);
  });

  app.post('/api/message/send2', {
    preValidation: app.authenticate,
    schema: {
      ...schema, operationId: 'sendTemplateMessage', summary: 'Send a template message (body parameters, header, buttons)', description, body: SendTemplateBody,
    },
  }, async (request, reply) => {
    const user = request.currentUser!;
    const recipient = recipientOf(request.body, user.id, app.contacts);
    const outcome = await counted(sendMessage(deps, user, templateMessage(request.body, recipient), request.headers['idempotency-key'], recipient.contactId));
    return answer(reply, outcome);
  });
};
export default messages;
