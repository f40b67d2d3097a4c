// GET /metrics in the Prometheus text format: for the METRICS_TOKEN bearer, or an ADMIN session.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errors } from '../../schemas/common';
import { bearerToken } from '../plugins/auth';
import { sameSecret } from '../webhooks/signature';

const metrics: FastifyPluginAsyncTypebox = async (app) => {
  const { metricsToken } = app.config;
  const adminOnly = app.requireRole('ADMIN');
  // The scraper's token first; anything else (a JWT, a cookie, a wrong token) must be an ADMIN session.
  const scraperOrAdmin = async (request: FastifyRequest) => {
    const bearer = bearerToken(request.headers.authorization);
    if (metricsToken !== undefined && bearer !== undefined && sameSecret(bearer, metricsToken)) return;
    await adminOnly(request);
  };

  app.get('/metrics', {
    preValidation: scraperOrAdmin,
    schema: {
      tags: ['health'], operationId: 'getMetrics', summary: 'Prometheus metrics in the text format',
      description: 'For `Authorization: Bearer <METRICS_TOKEN>` (when that variable is set) or an ADMIN session; 401 or 403 otherwise.',
      security: [{ bearer: [] }, { cookie: [] }],
      response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }), ...errors(401, 403) },
    },
  }, async (_request, reply) => {
    const { registry } = app.metrics;
    return reply.type(registry.contentType).send(await registry.metrics());
  });
};
export default metrics;
