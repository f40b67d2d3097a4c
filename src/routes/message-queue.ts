// The send queue's own routes: POST /api/message/batch (up to 1,000 sends queued at once, one result per item) and
// DELETE /api/message/{id} (cancel a queued or scheduled message, refunded).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams } from '../../schemas/common';
import { Message } from '../../schemas/conversations';
import { BatchAnswer, BatchBody } from '../../schemas/message-queue';
import { SendBody, SendTemplateBody } from '../../schemas/messages';
import { AppError } from '../errors';
import { errorBody, validationMessage } from '../plugins/error-handler';
import { bodyValidator } from '../plugins/validation';
import { freeFormMessage, templateMessage } from '../services/outbound-message';
import { cancelQueued, queueMessage, type QueuedAnswer } from '../services/queue-message';
import { recipientOf } from '../services/send-recipient';

/** A 1,000-item batch of long messages is larger than other bodies. */
const BATCH_BODY_LIMIT = 4 * 1024 * 1024;
type Result = { index: number; status: number; message?: QueuedAnswer; error?: ReturnType<typeof errorBody> };

const messageQueue: FastifyPluginAsyncTypebox = async (app) => {
  const checkSend = bodyValidator(SendBody);
  const checkTemplate = bodyValidator(SendTemplateBody);

  /** One item: checked as its own send or send2 body would be, then queued; its error names the item's field. */
  async function queueItem(user: Parameters<typeof queueMessage>[1], item: Record<string, unknown>, index: number): Promise<Result> {
    const where = `body/messages/${index}`;
    try {
      const { idempotency_key: key, ...body } = item;
      if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 128)) {
        throw new AppError(400, 'VALIDATION_ERROR', `${where}/idempotency_key must be a string of 1 to 128 characters`);
      }
      const template = 'template_name' in body;
      const check = template ? checkTemplate : checkSend;
      if (!check(body)) throw new AppError(400, 'VALIDATION_ERROR', validationMessage(where, check.errors![0]!));
      let message;
      let recipient;
      try {
        recipient = recipientOf(body as never, user.id, app.contacts);
        message = template ? templateMessage(body as never, recipient) : freeFormMessage(body as never, recipient);
      } catch (error) {
        if (error instanceof AppError) throw new AppError(error.statusCode, error.code, error.message.replace(/^body\//, `${where}/`));
        throw error;
      }
      const outcome = await queueMessage(app.queueDeps, user, message, body as { send_at?: string; expires_at?: string }, key as string | undefined, where, recipient.contactId);
      return { index, status: 202, message: outcome.answer };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return { index, status: error.statusCode, error: { ...errorBody(error.statusCode, error.code, error.message), ...error.extra } };
    }
  }

  app.post('/api/message/batch', {
    preValidation: app.authenticate,
    bodyLimit: BATCH_BODY_LIMIT,
    schema: {
      tags: ['messages'], security: SessionSecurity, operationId: 'queueMessageBatch',
      summary: 'Queue up to 1,000 messages at once',
      description: 'Each item is a `send` body or a `send2` body (told apart by `template_name`), with optional `send_at`, `expires_at` and '
        + 'an `idempotency_key` of its own. Every item is checked and queued on its own, in order, one credit each: the answer has one result '
        + 'per item, `{index, status: 202, message}` or `{index, status, error}` in the error shape (400 for a bad item, 402 `CREDITS_EXHAUSTED` '
        + 'for an item beyond the allowance, 422 `IDEMPOTENCY_KEY_REUSED`). 409 `MESSAGING_NOT_CONFIGURED` when the account cannot send at all.',
      body: BatchBody,
      response: { 202: BatchAnswer, ...errors(400, 401, 403, 409, 413, 415, 503) },
    },
  }, async (request, reply) => {
    const user = request.currentUser!;
    // Refused as a whole before any item: the account cannot send.
    if (!user.messagingToken || !user.messagingPhoneNumberId) await queueMessage(app.queueDeps, user, { kind: 'text', to: '0', body: '' }, {});
    // Started in order: their writes join the writer's batch in item order, so credits go to the first items.
    const results = await Promise.all(request.body.messages.map((item, index) => queueItem(user, item as Record<string, unknown>, index)));
    return reply.code(202).send({ results });
  });

  app.delete('/api/message/:id', {
    preValidation: app.authenticate,
    schema: {
      tags: ['messages'], security: SessionSecurity, operationId: 'cancelQueuedMessage',
      summary: 'Cancel a queued or scheduled message',
      description: 'The message becomes `failed` with error code CANCELLED and its credit is refunded. 409 `MESSAGE_NOT_QUEUED` once it is '
        + 'being sent (or was sent, failed or cancelled already); 404 `MESSAGE_NOT_FOUND` for a message that is not one of yours (an ADMIN may cancel any user\'s).',
      params: IdParams,
      response: { 200: Message, ...errors(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const caller = request.currentUser!;
    // An ADMIN cancels any user's message (the console's queue view), as the message's owner would: refunded to that owner.
    const ownerId = caller.role === 'ADMIN' ? app.messagesRepo.findById(request.params.id)?.userId : undefined;
    const owner = ownerId === undefined || ownerId === caller.id ? caller : app.usersRepo.findById(ownerId) ?? caller;
    return cancelQueued(app.queueDeps, owner, request.params.id);
  });
};
export default messageQueue;
