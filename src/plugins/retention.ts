// The retention sweep for the app's lifetime: started once the server listens (start-up never waits for it),
// every hour after that, and stopped before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { runForAppLifetime } from './background-job';
import { createRetentionRepo } from '../db/retention-repo';
import { createRetentionSweep, type RetentionSweep } from '../jobs/retention';

declare module 'fastify' {
  interface FastifyInstance {
    retentionSweep: RetentionSweep;
  }
}

export default fp(async function retention(app: FastifyInstance) {
  const sweep = createRetentionSweep({
    writer: app.writer, retention: createRetentionRepo(app.db), events: app.webhookEventsRepo, sessions: app.sessionsRepo,
    now: app.now, log: app.log,
    webhookEventsDays: app.config.retentionWebhookEventsDays, messagesDays: app.config.retentionMessagesDays,
    media: { remove: app.mediaFiles.remove, sweepOrphans: app.mediaDownloads.sweepOrphans },
    eventLog: { deleteBefore: app.eventsRepo.deleteBefore, days: app.config.retentionEventsDays },
  });
  app.decorate('retentionSweep', sweep);
  runForAppLifetime(app, 'onListen', sweep);
}, { name: 'retention', dependencies: ['db', 'media-archive', 'events'] });
