// The inbound media archive for the app's lifetime: its files, queue and network client, and the download worker,
// started once the server listens and stopped (downloads under way aborted, still queued) before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMediaRepo, type MediaRepo } from '../db/media-repo';
import { createMediaDownloads, type MediaDownloads } from '../jobs/media-downloads';
import { createLoadMonitor } from '../load-monitor';
import { createMediaFiles, type MediaFiles } from '../media-files';
import { createMediaClient } from '../messaging/media';
import { listedMessageJson } from '../services/message-json';

declare module 'fastify' {
  interface FastifyInstance {
    mediaFiles: MediaFiles;
    mediaRepo: MediaRepo;
    mediaDownloads: MediaDownloads;
  }
}

export default fp(async function mediaArchive(app: FastifyInstance) {
  const files = createMediaFiles(app.config.databasePath);
  const repo = createMediaRepo(app.db, listedMessageJson);
  const client = createMediaClient({
    baseUrl: app.config.messagingApiUrl, timeoutMs: app.config.messagingTimeoutMs, maxBytes: app.config.mediaMaxBytes, now: () => app.now().getTime(),
  });
  const load = createLoadMonitor();
  const downloads = createMediaDownloads({
    writer: app.writer, repo, client, files, openToken: app.openMessagingToken, now: app.now, log: app.log,
    // Archiving can wait for a quiet moment; sends, callbacks and listings cannot.
    busy: () => load.busy() || app.conversationsReader.busy(),
  });
  app.decorate('mediaFiles', files);
  app.decorate('mediaRepo', repo);
  app.decorate('mediaDownloads', downloads);
  // onListen, not onReady: an app only injected into (tests, scripts) downloads nothing by itself.
  app.addHook('onListen', async () => {
    load.start();
    downloads.start();
  });
  // Registered after the database, so this runs before it closes.
  app.addHook('onClose', async () => {
    load.stop();
    await downloads.stop();
    await client.close();
  });
}, { name: 'media-archive', dependencies: ['db'] });
