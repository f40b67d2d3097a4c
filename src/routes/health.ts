// Liveness and readiness probes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../schemas/common';
import { databaseAnswers } from '../db/client';
import { AppError } from '../errors';

const Status = Type.Object({ status: Type.String() });

const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: { tags: ['health'], operationId: 'getLiveness', summary: 'Liveness: 200 while the process runs', security: [], response: { 200: Status } },
  }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    schema: { tags: ['health'], operationId: 'getReadiness', summary: 'Readiness: 200 when the database answers, 503 with the reason otherwise', security: [], response: { 200: Status, ...errors(503) } },
  }, async () => {
    if (!databaseAnswers(app.db)) throw new AppError(503, 'DATABASE_UNAVAILABLE', 'The database does not answer');
    return { status: 'ready' };
  });
};
export default health;
