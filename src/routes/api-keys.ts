// API keys of a user: create (the key shown once), list, revoke — the user itself or an ADMIN.
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { CreatedKey, KeyList, KeyParams, NewKeyBody } from '../../schemas/events';
import { AppError } from '../errors';
import { checkUserScope } from '../events/access';
import { API_KEY_PREFIX } from '../plugins/api-key-auth';
import { actorOf, recordAudit } from '../services/audit';
import { isoUtc } from '../support/iso-utc';

export const MAX_KEYS = 20;
const security: { [name: string]: string[] }[] = [{ bearer: [] }, { cookie: [] }];

const apiKeys: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/user/:id/keys', {
    preValidation: app.authenticate,
    schema: {
      tags: ['events'], operationId: 'createApiKey', summary: 'Create an API key',
      description: `The key (\`gwk_…\`) is in this answer only: the gateway keeps its hash. At most ${MAX_KEYS} per user (409 \`TOO_MANY_KEYS\`).`,
      security, params: IdParams, body: NewKeyBody,
      response: { 201: CreatedKey, ...errors(400, 401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
    const now = app.now().getTime();
    const actor = actorOf(request.currentUser, request.ip);
    const row = await app.writer.write(() => {
      const created = app.apiKeysRepo.create(user.id, request.body.name, key, now, MAX_KEYS);
      // The audit row names the key (id, name, last 4 as listed), never the key.
      if (created) recordAudit(app.auditRepo, { actor, action: 'key.created', target: user, at: app.now(), details: { key_id: created.id, name: created.name } });
      return created;
    });
    if (!row) throw new AppError(409, 'TOO_MANY_KEYS', `A user holds at most ${MAX_KEYS} API keys; revoke one first`);
    return reply.code(201).send({ id: row.id, name: row.name, key, created_at: isoUtc(row.createdAt) });
  });

  app.get('/api/user/:id/keys', {
    preValidation: app.authenticate,
    schema: {
      tags: ['events'], operationId: 'listApiKeys', summary: "List a user's API keys",
      description: 'Never the key itself: its last 4 characters, and when it was last used (to the minute).',
      security, params: IdParams, response: { 200: KeyList, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    return {
      keys: app.apiKeysRepo.list(user.id).map((k) => ({
        id: k.id, name: k.name, last4: k.last4, created_at: isoUtc(k.createdAt), last_used_at: k.lastUsedAt === null ? null : isoUtc(k.lastUsedAt),
      })),
    };
  });

  app.delete('/api/user/:id/keys/:key_id', {
    preValidation: app.authenticate,
    schema: {
      tags: ['events'], operationId: 'revokeApiKey', summary: 'Revoke an API key',
      description: 'Refused from the next request on; streams opened with it end at once. 404 `KEY_NOT_FOUND`.',
      security, params: KeyParams, response: { 204: { type: 'null', description: 'Revoked' }, ...errors(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    const actor = actorOf(request.currentUser, request.ip);
    const revoked = await app.writer.write(() => {
      const name = app.apiKeysRepo.list(user.id).find((k) => k.id === request.params.key_id)?.name;
      const gone = app.apiKeysRepo.revoke(user.id, request.params.key_id);
      if (gone) recordAudit(app.auditRepo, { actor, action: 'key.revoked', target: user, at: app.now(), details: { key_id: request.params.key_id, name } });
      return gone;
    });
    if (!revoked) throw new AppError(404, 'KEY_NOT_FOUND', 'No such API key for this user');
    app.eventStreams.recheck(user.id);
    return reply.code(204).send();
  });
};
export default apiKeys;
