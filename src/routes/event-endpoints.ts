// Event endpoints of a user (deliveries of its events, Standard Webhooks): create (secret shown once), list, get,
// update, delete, test ping, replay, retry a parked event — the user itself or an ADMIN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import {
  AttemptAnswer, CreatedEndpoint, Endpoint, EndpointList, EndpointParams, NewEndpointBody, ParkedParams, ReplayBody, UpdateEndpointBody,
} from '../../schemas/events';
import { AppError } from '../errors';
import { actorOf, recordAudit, type AuditAction } from '../services/audit';
import { checkUserScope } from '../events/access';
import type { PostResult } from '../events/endpoint-client';
import { newEndpointSecret } from '../events/webhook-signature';
import type { EndpointRow } from '../db/event-endpoints-repo';
import type { FastifyRequest } from 'fastify';
import { endpointView } from '../views/endpoint-view';

export const MAX_ENDPOINTS = 5;
const security: { [name: string]: string[] }[] = [{ bearer: [] }, { cookie: [] }];
const tags = ['events'];
const notFound = () => new AppError(404, 'ENDPOINT_NOT_FOUND', 'No such event endpoint for this user');
const badUrl = (message: string) => new AppError(400, 'ENDPOINT_URL_REFUSED', message);
/** The audit row names an endpoint by id and host only: a path or query may carry a receiver's own secret. */
const hostOf = (url: string) => URL.parse(url)?.host ?? null;

function attemptAnswer(result: PostResult | undefined) {
  if (result === undefined) return { delivered: false, status: null, duration_ms: 0, error: 'the secret cannot be decrypted with this key' };
  if (result.kind === 'failed') return { delivered: false, status: null, duration_ms: result.durationMs, error: result.error };
  const delivered = result.status >= 200 && result.status < 300;
  return { delivered, status: result.status, duration_ms: result.durationMs, error: delivered ? null : `HTTP ${result.status}` };
}

const eventEndpoints: FastifyPluginAsyncTypebox = async (app) => {
  const view = (row: EndpointRow) => endpointView(row, app.eventsRepo.lastSeq(row.userId), app.eventEndpointsRepo.parked(row.id));
  /** The endpoint `endpoint_id` of user `id`, after the caller's rights are checked. */
  function endpointOf(caller: NonNullable<FastifyRequest['currentUser']>, params: { id: number; endpoint_id: number }): EndpointRow {
    const user = checkUserScope(caller, params.id, app.usersRepo.findById);
    const row = app.eventEndpointsRepo.byId(params.endpoint_id);
    if (!row || row.userId !== user.id) throw notFound();
    return row;
  }
  /** Records a change to an endpoint of `userId` (call inside the write of the change). */
  function audit(request: FastifyRequest, action: AuditAction, row: EndpointRow, details: Record<string, unknown> = {}) {
    const owner = app.usersRepo.findById(row.userId);
    recordAudit(app.auditRepo, {
      actor: actorOf(request.currentUser, request.ip), action, target: owner ? { id: owner.id, email: owner.email } : null, at: app.now(),
      details: { endpoint_id: row.id, url_host: hostOf(row.url), ...details },
    });
  }
  async function checkUrl(url: string): Promise<void> {
    const refused = await app.endpointAddresses.checkUrl(url);
    if (refused !== undefined) throw badUrl(refused);
  }

  app.post('/api/user/:id/event-endpoints', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'createEventEndpoint', summary: 'Create an event endpoint',
      description: `Events written from now on are POSTed to \`url\` (Standard Webhooks). The \`secret\` is in this answer only. `
        + `At most ${MAX_ENDPOINTS} per user (409 \`TOO_MANY_ENDPOINTS\`). A URL that is not https, or that resolves to a loopback, private, `
        + 'link-local, shared or reserved address, is refused with 400 `ENDPOINT_URL_REFUSED`.',
      params: IdParams, body: NewEndpointBody, response: { 201: CreatedEndpoint, ...errors(400, 401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    const { url, types, description } = request.body;
    await checkUrl(url);
    const secret = newEndpointSecret();
    const row = await app.writer.write(() => {
      const created = app.eventEndpointsRepo.create({
        userId: user.id, url, description: description ?? null, typesJson: types === undefined ? null : JSON.stringify(types),
        secretSealed: app.tokenCipher.seal(secret),
      }, app.now().getTime(), MAX_ENDPOINTS);
      if (created) audit(request, 'endpoint.created', created);
      return created;
    });
    if (!row) throw new AppError(409, 'TOO_MANY_ENDPOINTS', `A user has at most ${MAX_ENDPOINTS} event endpoints; delete one first`);
    return reply.code(201).send({ ...view(row), secret });
  });

  app.get('/api/user/:id/event-endpoints', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'listEventEndpoints', summary: "List a user's event endpoints",
      params: IdParams, response: { 200: EndpointList, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    return { endpoints: app.eventEndpointsRepo.ofUser(user.id).map(view) };
  });

  app.get('/api/user/:id/event-endpoints/:endpoint_id', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'getEventEndpoint', summary: 'One event endpoint: state, cursor, lag, last attempt, parked events',
      params: EndpointParams, response: { 200: Endpoint, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => view(endpointOf(request.currentUser!, request.params)));

  app.put('/api/user/:id/event-endpoints/:endpoint_id', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'updateEventEndpoint', summary: 'Update, disable or re-enable an event endpoint',
      description: '`enabled: true` re-enables a disabled endpoint: delivery resumes from its cursor.',
      params: EndpointParams, body: UpdateEndpointBody, response: { 200: Endpoint, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => {
    const row = endpointOf(request.currentUser!, request.params);
    const { url, types, description, enabled } = request.body;
    if (url !== undefined) await checkUrl(url);
    const updated = await app.writer.write(() => {
      const changed = app.eventEndpointsRepo.update(row.id, {
        ...(url === undefined ? {} : { url }), ...(description === undefined ? {} : { description }),
        ...(types === undefined ? {} : { typesJson: types === null ? null : JSON.stringify(types) }), ...(enabled === undefined ? {} : { enabled }),
      }, app.now().getTime());
      if (changed) audit(request, 'endpoint.changed', changed, { fields: Object.keys(request.body), ...(enabled === undefined ? {} : { enabled }) });
      return changed;
    });
    if (!updated) throw notFound();
    app.eventDeliveries.tick();
    return view(updated);
  });

  app.delete('/api/user/:id/event-endpoints/:endpoint_id', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'deleteEventEndpoint', summary: 'Delete an event endpoint',
      params: EndpointParams, response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const row = endpointOf(request.currentUser!, request.params);
    await app.writer.write(() => {
      if (app.eventEndpointsRepo.remove(row.id)) audit(request, 'endpoint.deleted', row);
    });
    return reply.code(204).send();
  });

  app.post('/api/user/:id/event-endpoints/:endpoint_id/test', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'pingEventEndpoint', summary: 'Send a `ping` event now',
      description: 'A signed delivery of one `ping` event (id 0, not in the log); answers what the endpoint answered.',
      params: EndpointParams, response: { 200: AttemptAnswer, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => attemptAnswer(await app.eventDeliveries.ping(endpointOf(request.currentUser!, request.params))));

  app.post('/api/user/:id/event-endpoints/:endpoint_id/replay', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'replayEventEndpoint', summary: 'Deliver again every event after an id',
      description: 'Moves the cursor to `after`: the events after it are delivered again, in order. 410 `EVENTS_CURSOR_EXPIRED` when they are no longer kept.',
      params: EndpointParams, body: ReplayBody, response: { 200: Endpoint, ...errors(400, 401, 403, 404, 410) },
    },
  }, async (request) => {
    const row = endpointOf(request.currentUser!, request.params);
    const { after } = request.body;
    const oldest = app.eventsRepo.oldestSeq(row.userId) ?? app.eventsRepo.lastSeq(row.userId) + 1;
    if (after < oldest - 1) {
      throw new AppError(410, 'EVENTS_CURSOR_EXPIRED', `Events after ${after} are no longer kept; replay after ${oldest - 1} or later`, { oldest_available: oldest });
    }
    const updated = await app.writer.write(() => {
      const moved = app.eventEndpointsRepo.settle(row.id, {
        cursor: Math.min(after, app.eventsRepo.lastSeq(row.userId)), batchId: null, batchLast: null, refusals: 0, nextAttemptAt: 0,
      });
      if (moved) audit(request, 'endpoint.changed', moved, { replay_after: after });
      return moved;
    });
    app.eventDeliveries.tick();
    return view(updated!);
  });

  app.post('/api/user/:id/event-endpoints/:endpoint_id/parked/:event_id/retry', {
    preValidation: app.authenticate,
    schema: {
      tags, security, operationId: 'retryParkedEvent', summary: 'Deliver a parked event again now',
      description: 'Delivered (2xx) → no longer parked. 404 `EVENT_NOT_PARKED` when it is not parked (or no longer kept).',
      params: ParkedParams, response: { 200: AttemptAnswer, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => {
    const row = endpointOf(request.currentUser!, request.params);
    const parked = app.eventEndpointsRepo.parked(row.id).some((p) => p.seq === request.params.event_id);
    const result = parked ? await app.eventDeliveries.retryParked(row, request.params.event_id) : undefined;
    if (!parked || result === undefined) throw new AppError(404, 'EVENT_NOT_PARKED', 'This event is not parked for this endpoint');
    return attemptAnswer(result);
  });
};
export default eventEndpoints;
