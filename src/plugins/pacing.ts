// Pacing and the send queue for the app's lifetime: the per-number pacer shared by synchronous sends and the queue
// worker, the queue repository, and the worker (started when the app is ready, stopped before the database closes).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createQueueRepo, type QueueRepo } from '../db/queue-repo';
import { createPacer, type Pacer } from '../messaging/pacer';
import { createQueueWorker, type QueueWorker } from '../pacing/queue-worker';
import type { QueueDeps } from '../services/queue-message';
import { listedMessage } from '../views/message-json';
import { runForAppLifetime } from './background-job';

declare module 'fastify' {
  interface FastifyInstance {
    pacer: Pacer;
    queueRepo: QueueRepo;
    /** What queueing and cancelling a message need (the routes' dependencies). */
    queueDeps: QueueDeps;
    sendQueue: QueueWorker & { metrics(): { phoneNumberId: string; depth: number; oldestAgeSeconds: number; pausedUntilSeconds: number }[] };
  }
}

export default fp(async function pacing(app: FastifyInstance) {
  const pacer = createPacer();
  const queue = createQueueRepo(app.db, listedMessage);
  const worker = createQueueWorker({
    writer: app.writer, queue, messages: app.messagesRepo, contacts: app.contacts, credits: app.creditsRepo, users: app.usersRepo, client: app.messagingClient,
    pacer, tracker: app.sendTracker, openToken: app.openMessagingToken, timezone: app.config.timezone, now: app.now, log: app.log,
    onThrottle: (phoneNumberId, code) => app.metrics.queueThrottled(phoneNumberId, code),
  });
  /** Per phone number id, at scrape time: one grouped read of the waiting rows, and the worker's pauses. */
  const metrics = () => {
    const now = app.now().getTime();
    const paused = new Map(worker.pauses().map((p) => [p.userId, p.pausedUntil]));
    const rows = queue.stats().map((q) => ({ ...q, phoneNumberId: app.usersRepo.findById(q.userId)?.messagingPhoneNumberId ?? `user-${q.userId}` }));
    return rows.map((q) => {
      const until = paused.get(q.userId) ?? 0;
      return { phoneNumberId: q.phoneNumberId, depth: q.depth, oldestAgeSeconds: Math.max(0, (now - q.oldest) / 1000), pausedUntilSeconds: until > now ? until / 1000 : 0 };
    });
  };
  app.decorate('pacer', pacer);
  app.decorate('queueRepo', queue);
  app.decorate('queueDeps', {
    writer: app.writer, messages: app.messagesRepo, contacts: app.contacts, queue, credits: app.creditsRepo, idempotency: app.idempotencyRepo,
    timezone: app.config.timezone, now: app.now, openToken: app.openMessagingToken, wake: worker.wake,
  });
  app.decorate('sendQueue', Object.assign(worker, { metrics }));
  runForAppLifetime(app, 'onReady', worker);
}, { name: 'pacing', dependencies: ['db', 'messaging', 'send-settlement'] });
