// Liveness and readiness probes: ready means the database answers, takes writes, and its filesystem keeps room.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../schemas/common';
import { databaseAnswers } from '../db/client';
import { AppError, STORAGE_RETRY_AFTER_S } from '../errors';
import { freeBytes } from '../support/free-space';

const MIB = 1024 * 1024;

const Status = Type.Object({ status: Type.String() });

const health: FastifyPluginAsyncTypebox = async (app) => {
  // Probes (load balancers, orchestrators, uptime monitors) call these, not browsers: the baseline headers only.
  app.get('/healthz', {
    config: { calledByMachines: true },
    schema: { tags: ['health'], operationId: 'getLiveness', summary: 'Liveness: 200 while the process runs', security: [], response: { 200: Status } },
  }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    config: { calledByMachines: true },
    schema: { tags: ['health'], operationId: 'getReadiness', summary: 'Readiness: 200 when storage takes writes, 503 with the reason otherwise',
    description: '503 `DATABASE_UNAVAILABLE`; `STORAGE_UNAVAILABLE` while writes fail (with the cause; after a callback or send failed for storage '
      + 'reasons, until such a write succeeds again); `STORAGE_LOW` while the free space of the database\'s filesystem is below STORAGE_MIN_FREE_MB.', security: [], response: { 200: Status, ...errors(503) } },
  }, async () => {
    if (!databaseAnswers(app.db)) throw new AppError(503, 'DATABASE_UNAVAILABLE', 'The database does not answer');
    // No write while writes succeed; while they fail, a tiny probe write (at most once a second) sees storage come back.
    const writes = await app.writer.checkWrites();
    if (!writes.ok) {
      throw new AppError(503, 'STORAGE_UNAVAILABLE', `The database does not take writes: ${writes.reason} (${writes.code})`,
        undefined, { 'retry-after': String(STORAGE_RETRY_AFTER_S) });
    }
    const free = freeBytes(app.config.databasePath);
    if (free < app.config.storageMinFreeMb * MIB) {
      throw new AppError(503, 'STORAGE_LOW', `The database's filesystem has ${Math.floor(free / MIB)} MiB free, below STORAGE_MIN_FREE_MB `
        + `(${app.config.storageMinFreeMb} MiB): free some space before writes fail`, undefined, { 'retry-after': String(STORAGE_RETRY_AFTER_S) });
    }
    return { status: 'ready' };
  });
};
export default health;
