// The network's webhook: the verification handshake and signed callbacks into the durable inbox (SPEC §6).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../schemas/common';
import { CALLBACK_EXAMPLE, SignatureHeaders, VerifyQuery, WebhookAck, WebhookCallback } from '../../schemas/webhook';
import { AppError, storageUnavailable } from '../errors';
import { parseJsonBody } from '../support/json-body';
import { isValidSignature, sameSecret } from '../webhooks/signature';

const WEBHOOK_PATH = '/api/messaging/webhook';
const BODY_LIMIT = 3 * 1024 * 1024;
/** Accepted unsigned callbacks (MESSAGING_ALLOW_UNSIGNED) are logged at most this often. */
const UNSIGNED_WARNING_MS = 60_000;

/** The body as a JSON object, or a 400: the network only ever sends an object. */
function parseObject(text: string): object {
  const value = parseJsonBody(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError(400, 'INVALID_PAYLOAD', 'Request body must be a JSON object');
  }
  return value;
}

const webhook: FastifyPluginAsyncTypebox = async (app) => {
  const { messagingVerifyToken: verifyToken, messagingAppSecret: appSecret, messagingAllowUnsigned: allowUnsigned } = app.config;
  let unsignedWarnedAt = -Infinity;
  // Failed events are processed again by the webhook-inbox plugin, and unmatched statuses forgotten after a week by
  // the retention sweep, both in the background.

  // The signature is over the raw bytes: keep them (this plugin's scope only), parse after checking.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.get(WEBHOOK_PATH, {
    config: { calledByMachines: true },
    schema: {
      tags: ['webhook'], operationId: 'verifyWebhook', summary: 'Verification handshake of the messaging network',
      description: 'Answers `hub.challenge` as text/plain when `hub.mode` is `subscribe` and `hub.verify_token` matches the configured '
        + 'verify token; 403 `VERIFICATION_FAILED` otherwise (also while no verify token is configured).',
      security: [],
      querystring: VerifyQuery,
      response: {
        200: { description: 'The challenge, as it was given', content: { 'text/plain': { schema: Type.String({ examples: ['1158201444'] }) } } },
        ...errors(400, 403),
      },
    },
  }, async (request, reply) => {
    const query = request.query;
    const tokenMatches = verifyToken !== undefined && sameSecret(query['hub.verify_token'], verifyToken);
    if (query['hub.mode'] !== 'subscribe' || !tokenMatches) {
      throw new AppError(403, 'VERIFICATION_FAILED', 'Wrong hub.mode or hub.verify_token, or no verify token is configured');
    }
    // The challenge is the caller's text: plain text, never sniffed into HTML (the route's baseline headers say nosniff).
    return reply.type('text/plain; charset=utf-8').send(query['hub.challenge']);
  });

  app.post(WEBHOOK_PATH, {
    bodyLimit: BODY_LIMIT,
    // The body and signature header are documented, not validated by Fastify: the signature is checked over the raw bytes first.
    config: { calledByMachines: true, swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: { ...WebhookCallback, examples: [CALLBACK_EXAMPLE] }, headers: SignatureHeaders }, url }) },
    schema: {
      tags: ['webhook'], operationId: 'receiveWebhook', summary: 'Callback of the messaging network (messages, statuses)',
      description: 'Signed with X-Hub-Signature-256 over the raw body (401 `INVALID_SIGNATURE` when missing or wrong). Processed and '
        + 'stored durably with its outcome before the 200; duplicates change nothing. Up to 3 MB. 503 `WEBHOOK_NOT_CONFIGURED` while no app secret is '
        + 'configured, `STORAGE_UNAVAILABLE` when the callback cannot be stored (the network retries both).',
      security: [],
      response: { 200: WebhookAck, ...errors(400, 401, 413, 415, 503) },
    },
  }, async (request) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    if (appSecret === undefined) {
      // Refused, not dropped: the network keeps retrying for days while the operator sets the secret.
      if (!allowUnsigned) throw new AppError(503, 'WEBHOOK_NOT_CONFIGURED', 'Callbacks are refused until MESSAGING_APP_SECRET is set');
      const now = app.now().getTime();
      if (now - unsignedWarnedAt >= UNSIGNED_WARNING_MS) {
        unsignedWarnedAt = now;
        request.log.warn('unsigned webhook callback accepted (MESSAGING_ALLOW_UNSIGNED=true): anyone can forge callbacks');
      }
    } else {
      const signature = request.headers['x-hub-signature-256'];
      if (!isValidSignature(raw, typeof signature === 'string' ? signature : undefined, appSecret)) {
        throw new AppError(401, 'INVALID_SIGNATURE', 'X-Hub-Signature-256 is missing or does not match the body');
      }
    }
    const text = raw.toString('utf8');
    await app.webhookInbox.accept(text, parseObject(text)).catch((error: unknown) => {
      if (error instanceof AppError) throw error;
      // Not stored, whatever the reason: the network delivers it again after a 503, never after a 200.
      request.log.error({ err: error }, 'webhook callback not stored; the network retries it');
      throw storageUnavailable();
    });
    app.metrics.callbackReceived();
    return { status: 'received' as const };
  });
};
export default webhook;
