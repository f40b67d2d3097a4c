// Decorates the shared messaging network clients (sends, uploads) and closes their connection pools with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMessagingClient, type MessagingClient } from '../messaging/client';
import { createMediaUploader, type MediaUploader } from '../messaging/upload';

declare module 'fastify' {
  interface FastifyInstance {
    messagingClient: MessagingClient;
    /** Streams users' files to their network accounts (POST /api/media). */
    mediaUploader: MediaUploader;
  }
}

export default fp(async function messaging(app: FastifyInstance) {
  const client = createMessagingClient({
    baseUrl: app.config.messagingApiUrl, timeoutMs: app.config.messagingTimeoutMs, log: app.log, observe: app.metrics.networkCall,
  });
  const uploader = createMediaUploader({ baseUrl: app.config.messagingApiUrl, timeoutMs: app.config.messagingTimeoutMs, log: app.log });
  app.decorate('messagingClient', client);
  app.decorate('mediaUploader', uploader);
  app.addHook('onClose', async () => {
    await Promise.all([client.close(), uploader.close()]);
  });
}, { name: 'messaging', dependencies: ['metrics'] });
