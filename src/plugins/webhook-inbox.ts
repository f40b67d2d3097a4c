// The webhook inbox for the app's lifetime: decorates it, replays failed events after start-up and every few
// minutes, and stops the replay before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { runForAppLifetime } from './background-job';
import { createWebhookReplay, type WebhookReplay } from '../jobs/webhook-replay';
import { createInbox, type Inbox } from '../webhooks/inbox';

declare module 'fastify' {
  interface FastifyInstance {
    webhookInbox: Inbox;
    webhookReplay: WebhookReplay;
  }
}

export default fp(async function webhookInbox(app: FastifyInstance) {
  const inbox = createInbox({
    writer: app.writer, events: app.webhookEventsRepo, users: app.usersRepo, messages: app.messagesRepo, contacts: app.contacts, now: app.now, log: app.log,
    settled: app.metrics.eventSettled,
  });
  const replay = createWebhookReplay({ replayBatch: inbox.replayBatch, log: app.log });
  app.decorate('webhookInbox', inbox);
  app.decorate('webhookReplay', replay);
  runForAppLifetime(app, 'onReady', replay);
}, { name: 'webhook-inbox', dependencies: ['db', 'metrics'] });
