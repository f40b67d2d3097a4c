// The event feed's infrastructure: the log's repositories, the notifier woken after each commit, the stream hub, API
// keys, and the metrics they feed. Routes and the deliverer use what it decorates.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createApiKeysRepo, type ApiKeysRepo } from '../db/api-keys-repo';
import { createEventsRepo, eventLogOf, type EventsRepo } from '../db/events-repo';
import { createNotifier, type Notifier } from '../events/notifier';
import { createStreamHub, type StreamCredential, type StreamHub } from '../events/stream-hub';

declare module 'fastify' {
  interface FastifyInstance {
    eventsRepo: EventsRepo;
    apiKeysRepo: ApiKeysRepo;
    /** Wakes long polls, streams and deliveries once events commit. */
    eventNotifier: Notifier;
    eventStreams: StreamHub;
  }
}

export interface EventsPluginOptions {
  /** Seconds between the comment lines that keep a stream open through proxies (tests shrink it). */
  heartbeatMs?: number;
  /** Unsent bytes after which a stream that does not read is cut off. */
  streamMaxBufferedBytes?: number;
}

export const MAX_STREAMS_PER_USER = 5;

export default fp(async function events(app: FastifyInstance, options: EventsPluginOptions) {
  const log = eventLogOf(app.db.$client);
  log.setClock(app.now);
  const notifier = createNotifier();
  app.writer.afterCommit(() => {
    const users = log.takeTouched();
    if (users.length > 0) notifier.notify(users);
  });
  app.decorate('eventsRepo', createEventsRepo(app.db));
  app.decorate('apiKeysRepo', createApiKeysRepo(app.db));
  app.decorate('eventNotifier', notifier);

  function stillValid(credential: StreamCredential): boolean {
    const user = app.usersRepo.findById(credential.callerId);
    if (!user || !user.isActive) return false;
    if (credential.keyId !== undefined) return app.apiKeysRepo.exists(credential.keyId);
    if (credential.jti === undefined || credential.ver !== user.tokenVersion) return false;
    return !app.sessionsRepo.isRevoked(credential.jti);
  }
  const hub = createStreamHub({
    events: app.eventsRepo, notifier, stillValid, maxPerUser: MAX_STREAMS_PER_USER,
    maxBufferedBytes: options.streamMaxBufferedBytes ?? 1024 * 1024, heartbeatMs: options.heartbeatMs ?? 15_000,
  });
  app.decorate('eventStreams', hub);
  // Open streams would keep the server from closing.
  app.addHook('preClose', async () => hub.stop());
}, { name: 'events', dependencies: ['db'] });
