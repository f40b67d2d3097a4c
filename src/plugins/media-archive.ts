// The inbound media archive for the app's lifetime: its files, queue and network client, and the download worker,
// started once the server listens and stopped (downloads under way aborted, still queued) before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { runForAppLifetime } from './background-job';
import { createMediaRepo, type MediaRepo } from '../db/media-repo';
import { createMediaDownloads, type MediaDownloads } from '../jobs/media-downloads';
import { freeBytes } from '../support/free-space';
import { createMediaFiles, type MediaFiles } from '../db/media-files';
import { createMediaClient } from '../messaging/media';
import { listedMessageJson } from '../views/message-json';

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
  const { databasePath, mediaArchiveMaxBytes, storageMinFreeMb } = app.config;
  const downloads = createMediaDownloads({
    writer: app.writer, repo, client, files, openToken: app.openMessagingToken, now: app.now, log: app.log,
    // The floor is the database's room: the archive never takes it.
    room: { maxBytes: mediaArchiveMaxBytes, minFreeBytes: storageMinFreeMb * 1024 * 1024, freeBytes: () => freeBytes(databasePath) },
  });
  app.decorate('mediaFiles', files);
  app.decorate('mediaRepo', repo);
  app.decorate('mediaDownloads', downloads);
  // The network client has nothing to start; it closes once no download runs.
  runForAppLifetime(app, 'onListen', downloads, { start: () => undefined, stop: client.close });
}, { name: 'media-archive', dependencies: ['db'] });
