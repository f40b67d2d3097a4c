// Sending free-form and template messages (SPEC §5, §12): POST /api/message/send and /api/message/send2.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SessionSecurity } from '../../schemas/auth';
import type { RecipientBody } from '../../schemas/messages';
import { ErrorResponse, errors, withHeaders } from '../../schemas/common';
import {
  IdempotencyHeaders, SendAnswer, SendBadGatewayResponse, SendBody, SendRateLimitedResponse, SendStorageResponse, SendTemplateBody,
} from '../../schemas/messages';
import { QueuedMessage, QueueHeaders } from '../../schemas/message-queue';
import { AppError } from '../errors';
import { freeFormMessage, templateMessage } from '../services/outbound-message';
import { sendMessage, type SendDeps, type SendOutcome } from '../services/send-message';
import { recipientOf, type Recipient } from '../services/send-recipient';
import { queueMessage, type QueueOutcome, type QueueTimes } from '../services/queue-message';
import type { OutboundMessage } from '../messaging/client';

const messages: FastifyPluginAsyncTypebox = async (app) => {
  const deps: SendDeps = {
    writer: app.writer, messages: app.messagesRepo, credits: app.creditsRepo, idempotency: app.idempotencyRepo,
    client: app.messagingClient, contacts: app.contacts, tracker: app.sendTracker, timezone: app.config.timezone, now: app.now,
    openToken: app.openMessagingToken, pacer: app.pacer, sendWaitMs: app.config.sendWaitMs,
  };
  const schema = {
    tags: ['messages'],
    security: SessionSecurity,
    headers: Type.Composite([IdempotencyHeaders, QueueHeaders]),
    response: {
      202: withHeaders(QueuedMessage, { 'preference-applied': Type.Literal('respond-async', { description: 'The message was queued' }) }),
      201: withHeaders(SendAnswer, {
        'idempotent-replayed': Type.Literal('true', { description: 'Present on a repeat with the same Idempotency-Key and body: the first answer again, no new send' }),
      }),
      429: withHeaders(SendRateLimitedResponse, { 'retry-after': Type.Integer({ description: 'Seconds to wait before retrying' }) }),
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
  const description = 'Takes one credit of this month. With `Prefer: respond-async`, a `send_at` or an `expires_at` the message is queued '
    + 'instead: 202 with the stored message (`queued` or `scheduled`), sent later at the number\'s `messaging_rate`. Errors: 400 when the body names no recipient or more than one (`to`, `recipient`, `contact_id`); 404 `CONTACT_NOT_FOUND` (`contact_id` is not one of yours); 402 `CREDITS_EXHAUSTED`; 409 `MESSAGING_NOT_CONFIGURED` (no token or '
    + 'phone number id for this account) or `IDEMPOTENCY_KEY_IN_USE` (a request with this key is still running); 422 '
    + '`IDEMPOTENCY_KEY_REUSED` (same key, another body); 429 `SEND_QUEUE_FULL` (this number\'s turns are booked beyond SEND_WAIT_MS: nothing sent or charged), 429 `MESSAGING_RATE_LIMITED` and 502 `MESSAGING_REJECTED` carry the '
    + 'network\'s error in `upstream`; 502 `MESSAGING_OUTCOME_UNKNOWN` (a request with this key stopped before its outcome was stored: '
    + 'its message `id`); 503 `STORAGE_UNAVAILABLE` (with `sent: true` and the `wamid` when the network accepted it: do not send again); 504 `MESSAGING_UNAVAILABLE` (the network did not answer in time).';
  /** `Prefer: respond-async`, a send_at or an expires_at: the message is queued and answered 202. */
  const queued = (prefer: string | undefined, body: { send_at?: string; expires_at?: string }) =>
    /(^|[,;\s])respond-async\b/i.test(prefer ?? '') || body.send_at !== undefined || body.expires_at !== undefined;
  const answerQueued = (reply: FastifyReply, outcome: QueueOutcome) => {
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(202).header('preference-applied', 'respond-async').send(outcome.answer);
  };
  const answer = (reply: FastifyReply, outcome: SendOutcome) => {
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(outcome.answer);
  };
  /** Sends the message a body describes now (201), or queues it (202) when the caller asked for that. */
  const sendOrQueue = async <B extends RecipientBody & QueueTimes>(reply: FastifyReply, user: NonNullable<FastifyRequest['currentUser']>, body: B,
    headers: { prefer?: string; 'idempotency-key'?: string }, build: (body: B, recipient: Recipient) => OutboundMessage) => {
    const recipient = recipientOf(body, user.id, app.contacts);
    const message = build(body, recipient);
    if (queued(headers.prefer, body)) {
      return answerQueued(reply, await queueMessage(app.queueDeps, user, message, body, headers['idempotency-key'], 'body', recipient.contactId));
    }
    return answer(reply, await counted(sendMessage(deps, user, message, headers['idempotency-key'], recipient.contactId)));
  };

  app.post('/api/message/send', {
    preValidation: app.authenticate,
    schema: {
      ...schema, operationId: 'sendMessage', summary: 'Send a text, media, location, contacts, interactive, reaction or template', description, body: SendBody,
    },
  }, async (request, reply) => sendOrQueue(reply, request.currentUser!, request.body, request.headers, freeFormMessage));

  app.post('/api/message/send2', {
    preValidation: app.authenticate,
    schema: {
      ...schema, operationId: 'sendTemplateMessage', summary: 'Send a template message (body parameters, header, buttons)', description, body: SendTemplateBody,
    },
  }, async (request, reply) => sendOrQueue(reply, request.currentUser!, request.body, request.headers, templateMessage));
};
export default messages;
