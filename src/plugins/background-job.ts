// The lifetime every background job of the app shares: started once the app is ready (or listens), stopped when it
// closes. Plugins register after the database, so their onClose runs before it closes: no batch writes to a closed
// database.
import type { FastifyInstance } from 'fastify';

export interface BackgroundJob { start(): void; stop(): Promise<void> | void }

/**
 * `onReady`: the first run starts on a later turn, without start-up waiting for it. `onListen`: an app only injected
 * into (tests, scripts) runs the job only when asked to.
 */
export function runForAppLifetime(app: FastifyInstance, startOn: 'onReady' | 'onListen', ...jobs: BackgroundJob[]): void {
  app.addHook(startOn, async () => {
    for (const job of jobs) job.start();
  });
  app.addHook('onClose', async () => {
    for (const job of jobs) await job.stop();
  });
}
