// Decorates the shared messaging network client and closes its connection pool with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMessagingClient, type MessagingClient } from '../messaging/client';

declare module 'fastify' {
  interface FastifyInstance {
    messagingClient: MessagingClient;
  }
}

export default fp(async function messaging(app: FastifyInstance) {
  const client = createMessagingClient({
    baseUrl: app.config.messagingApiUrl, timeoutMs: app.config.messagingTimeoutMs, log: app.log, observe: app.metrics.networkCall,
  });
  app.decorate('messagingClient', client);
  app.addHook('onClose', async () => {
    await client.close();
  });
}, { name: 'messaging', dependencies: ['metrics'] });
