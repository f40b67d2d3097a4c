// The inbound media archive for the app's lifetime: its files, queue and network client, and the download worker,
// started once the server listens and stopped (downloads under way aborted, still queued) before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { runForAppLifetime } from './background-job';
import { createMediaRepo, type MediaRepo } from '../db/media-repo';
import { createMediaDownloads, type MediaDownloads } from '../jobs/media-downloads';
import { freeBytes } from '../support/free-space';
import { adoptLegacyMedia, createMediaFiles, legacyMediaDirOf, mediaDirOf, type MediaFiles } from '../db/media-files';
import { createMediaClient } from '../messaging/media';
import { listedMessage } from '../views/message-json';

declare module 'fastify' {
  interface FastifyInstance {
    mediaFiles: MediaFiles;
    mediaRepo: MediaRepo;
    mediaDownloads: MediaDownloads;
  }
}

/** Files on record as stored but not in the folder (a restore without them) go back to the download queue. */
function requeueMissing(app: FastifyInstance, repo: MediaRepo, files: MediaFiles, storedIds: readonly number[]): void {
  const present = new Set(files.list().stored);
  const missing = storedIds.filter((id) => !present.has(id));
  if (missing.length === 0) return;
  for (let i = 0; i < missing.length; i += 500) app.writer.writeNow(() => missing.slice(i, i + 500).forEach((id) => repo.requeue(id)));
  app.log.warn({ count: missing.length, folder: files.dir }, 'Media files on record are missing from the archive folder: they are downloaded again');
}

export default fp(async function mediaArchive(app: FastifyInstance) {
  const path = app.config.databasePath;
  const repo = createMediaRepo(app.db, listedMessage);
  const storedIds = repo.storedIds();
  // The upgrade from the `media/` folder that databases in one directory used to share.
  if (adoptLegacyMedia(path, storedIds)) {
    app.log.info({ from: legacyMediaDirOf(path), to: mediaDirOf(path) }, 'The media archive moved to the database\'s own folder');
  }
  const files = createMediaFiles(path);
  requeueMissing(app, repo, files, storedIds);
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
