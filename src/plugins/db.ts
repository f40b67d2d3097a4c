// Opens the database for the app's lifetime and decorates the repositories routes may use.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { openDatabase, type DB } from '../db/client';
import { createConversationsRepo, type ConversationsRepo } from '../db/conversations-repo';
import { createCreditsRepo, type CreditsRepo } from '../db/credits-repo';
import { createIdempotencyRepo, type IdempotencyRepo } from '../db/idempotency-repo';
import { createMessagesRepo, type MessagesRepo } from '../db/messages-repo';
import { createUsersRepo, type UsersRepo } from '../db/users-repo';
import { createWebhookEventsRepo, type WebhookEventsRepo } from '../db/webhook-events-repo';
import { listedMessageJson } from '../services/message-json';

declare module 'fastify' {
  interface FastifyInstance {
    db: DB;
    usersRepo: UsersRepo;
    creditsRepo: CreditsRepo;
    messagesRepo: MessagesRepo;
    idempotencyRepo: IdempotencyRepo;
    conversationsRepo: ConversationsRepo;
    webhookEventsRepo: WebhookEventsRepo;
  }
}

export default fp(async function database(app: FastifyInstance, options: { path: string }) {
  const db = openDatabase(options.path);
  app.decorate('db', db);
  app.decorate('usersRepo', createUsersRepo(db));
  app.decorate('creditsRepo', createCreditsRepo(db));
  app.decorate('messagesRepo', createMessagesRepo(db, listedMessageJson));
  // Messages stored without their listed JSON (an older database, a raw import) are rendered once, here.
  app.messagesRepo.fillListedJson();
  app.decorate('idempotencyRepo', createIdempotencyRepo(db));
  app.decorate('conversationsRepo', createConversationsRepo(db, listedMessageJson));
  app.decorate('webhookEventsRepo', createWebhookEventsRepo(db));
  app.addHook('onClose', async () => {
    db.$client.close();
  });
}, { name: 'db' });
