// Liveness and readiness probes: ready means the database answers and takes writes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../schemas/common';
import { databaseAnswers } from '../db/client';
import { AppError, STORAGE_RETRY_AFTER_S } from '../errors';

const Status = Type.Object({ status: Type.String() });

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: { tags: ['health'], operationId: 'getLiveness', summary: 'Liveness: 200 while the process runs', security: [], response: { 200: Status } },
  }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    schema: { tags: ['health'], operationId: 'getReadiness', summary: 'Readiness: 200 when the database answers, 503 with the reason otherwise', security: [], response: { 200: Status, ...errors(503) } },
  }, async () => {
    if (!databaseAnswers(app.db)) throw new AppError(503, 'DATABASE_UNAVAILABLE', 'The database does not answer');
    // No write while writes succeed; while they fail, a tiny probe write (at most once a second) sees storage come back.
    const writes = await app.writer.checkWrites();
    if (!writes.ok) {
      throw new AppError(503, 'STORAGE_UNAVAILABLE', `The database does not take writes: ${writes.reason} (${writes.code})`,
        undefined, { 'retry-after': String(STORAGE_RETRY_AFTER_S) });
    }
    return { status: 'ready' };
  });
};
export default health;
