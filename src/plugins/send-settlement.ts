// Sends for the app's lifetime: the tracker of this process's sends in flight (and their settle writes retried while
// storage refuses them), and the job that settles sends a crash interrupted. Both stop before the database closes.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { runForAppLifetime } from './background-job';
import { createSettleInterrupted, type SettleInterrupted } from '../jobs/settle-interrupted';
import { createSendTracker, type SendTracker } from '../services/send-tracker';

declare module 'fastify' {
  interface FastifyInstance {
    sendTracker: SendTracker;
    settleInterrupted: SettleInterrupted;
  }
}

/** Beyond the longest a send may take (2 × MESSAGING_TIMEOUT_MS), so no live request is ever settled under it. */
export const SEND_BUDGET_MARGIN_MS = 60_000;

export default fp(async function sendSettlement(app: FastifyInstance) {
  const tracker = createSendTracker({ writer: app.writer, log: app.log });
  const job = createSettleInterrupted({
    writer: app.writer, messages: app.messagesRepo, credits: app.creditsRepo, isBusy: tracker.busy,
    budgetMs: app.messagingClient.budgetMs + SEND_BUDGET_MARGIN_MS, timezone: app.config.timezone, now: app.now, log: app.log,
  });
  app.decorate('sendTracker', tracker);
  app.decorate('settleInterrupted', job);
  // The tracker has nothing to start; it stops after the job.
  runForAppLifetime(app, 'onReady', job, { start: () => undefined, stop: tracker.stop });
}, { name: 'send-settlement', dependencies: ['db', 'messaging'] });
