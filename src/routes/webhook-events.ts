// Stored webhook events for administrators: the failed and dead ones, and a replay of one after a fix.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams } from '../../schemas/common';
import { ReplayBody, WebhookEvent, WebhookEventList, WebhookEventsQuery } from '../../schemas/webhook';
import { AppError } from '../errors';
import { actorOf, recordAudit } from '../services/audit';
import { webhookEventJson } from '../views/webhook-event-view';

const webhookEvents: FastifyPluginAsyncTypebox = async (app) => {
  const adminOnly = app.requireRole('ADMIN');
  const tags = ['webhook'];
  const security = SessionSecurity;

  app.get('/api/webhook/events', {
    preValidation: adminOnly,
    schema: {
      tags, security, operationId: 'listWebhookEvents', summary: 'List failed and dead webhook callbacks',
      description: 'Stored callbacks whose processing failed (retried automatically) or is dead (failed 5 times), newest first.',
      querystring: WebhookEventsQuery,
      response: { 200: WebhookEventList, ...errors(400, 401, 403) },
    },
  }, async (request) => {
    const { state, limit, before_id: beforeId } = request.query;
    // One more than asked tells whether a next page exists.
    const rows = app.webhookEventsRepo.page({ states: state ? [state] : ['failed', 'dead'], beforeId, limit: limit + 1 });
    const events = rows.slice(0, limit);
    return { events: events.map(webhookEventJson), next_before_id: rows.length > limit ? events.at(-1)!.id : null };
  });

  app.post('/api/webhook/events/:id/replay', {
    preValidation: adminOnly,
    schema: {
      tags, security,
      operationId: 'replayWebhookEvent', summary: 'Process a stored webhook callback again',
      description: 'Processes one stored callback again now, whatever its state (after a fix); duplicates change nothing. The body may be absent.',
      params: IdParams,
      body: ReplayBody,
      response: { 200: WebhookEvent, ...errors(400, 401, 403, 404, 413, 415, 503) },
    },
  }, async (request) => {
    const event = await app.webhookInbox.replayOne(request.params.id);
    if (!event) throw new AppError(404, 'WEBHOOK_EVENT_NOT_FOUND', 'No stored webhook event has this id');
    request.log.info({ webhookEventId: event.id, state: event.state, attempts: event.attempts }, 'webhook event replayed by an administrator');
    // The replay commits in the inbox's own write; its audit entry follows in the next one.
    const actor = actorOf(request.currentUser, request.ip);
    await app.writer.write(() => recordAudit(app.auditRepo, {
      actor, action: 'webhook_event.replayed', target: null, at: app.now(),
      details: { webhook_event_id: event.id, state: event.state, attempts: event.attempts },
    }));
    return webhookEventJson(event);
  });
};
export default webhookEvents;
