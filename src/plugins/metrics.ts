// Decorates the app's metrics (its own prom-client registry), read from the database at scrape time.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMetrics, type Metrics } from './metrics-registry';
import { freeBytes } from '../support/free-space';
import { monthKey } from '../support/time';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export default fp(async function metrics(app: FastifyInstance, options: { processMetrics?: boolean }) {
  app.decorate('metrics', createMetrics({
    backlog: () => app.webhookEventsRepo.backlog(),
    creditsUsed: () => app.creditsRepo.usedInMonth(monthKey(app.now(), app.config.timezone)),
    databasePath: app.config.databasePath,
    storage: () => app.writer.health(),
    syncs: () => app.writer.stats(),
    freeBytes: () => freeBytes(app.config.databasePath),
    // Read at scrape time: the media archive registers after this plugin.
    mediaDownloads: () => app.mediaDownloads.stats(),
    processMetrics: options.processMetrics ?? false,
    events: () => ({ written: app.eventsRepo.writtenSinceStart(), openStreams: app.eventStreams.stats().open, lag: app.eventEndpointsRepo.lags() }),
    // Read at scrape time: the send queue registers after this plugin.
    sendQueue: () => app.sendQueue.metrics(),
  }));
}, { name: 'metrics', dependencies: ['db'] });
