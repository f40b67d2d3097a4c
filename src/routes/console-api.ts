// The console's JSON endpoints: a user's usage by month, an administrator's password reset, the audit log.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams } from '../../schemas/common';
import { AuditList, AuditQuery, ResetPasswordAnswer, ResetPasswordBody, Usage, UsageQuery } from '../../schemas/console';
import { forbidden, userNotFound } from '../errors';
import { actorOf, recordAudit } from '../services/audit';
import { resetPassword } from '../services/password-reset';
import { monthUsage } from '../services/usage';
import { monthKey } from '../support/time';
import { auditEntryJson } from '../views/audit-view';

const consoleApi: FastifyPluginAsyncTypebox = async (app) => {
  const adminOnly = app.requireRole('ADMIN');
  const anyUser = app.requireRole('ADMIN', 'CLIENT');
  const security = SessionSecurity;

  app.get('/api/user/:id/usage', {
    preValidation: anyUser,
    schema: {
      tags: ['users'], security, operationId: 'getUserUsage', summary: "A user's usage in a month",
      description: 'Credits used against the allowance, sends by outcome and by error code, and the pricing categories of delivered '
        + 'messages, in one calendar month of TIMEZONE (this month by default). A user may read its own; an ADMIN anyone\'s.',
      params: IdParams, querystring: UsageQuery,
      response: { 200: Usage, ...errors(400, 401, 403, 404) },
    },
  }, async (request) => {
    const caller = request.currentUser!;
    if (caller.role !== 'ADMIN' && caller.id !== request.params.id) throw forbidden('A user may read only its own usage');
    const user = app.usersRepo.findById(request.params.id);
    if (!user) throw userNotFound();
    const month = request.query.month ?? monthKey(app.now(), app.config.timezone);
    return monthUsage({ usage: app.usageRepo, credits: app.creditsRepo }, user, month, app.config.timezone);
  });

  app.post('/api/user/:id/reset-password', {
    preValidation: adminOnly,
    schema: {
      tags: ['users'], security, operationId: 'resetUserPassword', summary: "Reset a user's password",
      description: 'Sets a new random password, answered once (only its hash is stored), and ends every session of the user. '
        + 'Resetting your own ends your session too. The body may be absent.',
      params: IdParams, body: ResetPasswordBody,
      response: { 200: ResetPasswordAnswer, ...errors(400, 401, 403, 404, 413, 415, 503) },
    },
  }, async (request, reply) => {
    const actor = actorOf(request.currentUser, request.ip);
    const reset = await resetPassword(
      { users: app.usersRepo, hash: app.passwords.hash, write: (body) => app.writer.write(body), now: app.now },
      () => app.usersRepo.findById(request.params.id),
      (user) => recordAudit(app.auditRepo, {
        actor, action: 'user.password_reset', target: { id: user.id, email: user.email }, at: app.now(), details: { sessions_ended: true },
      }),
    );
    if (!reset) throw userNotFound();
    return reply.header('cache-control', 'no-store').send({ password: reset.password });
  });

  app.get('/api/audit', {
    preValidation: adminOnly,
    schema: {
      tags: ['users'], security, operationId: 'listAudit', summary: 'The audit log',
      description: 'Administrative changes, newest first: who (user and client IP), what, on whom, when. Never a secret: a '
        + 'replaced token or a reset password is recorded as such, without its value.',
      querystring: AuditQuery,
      response: { 200: AuditList, ...errors(400, 401, 403) },
    },
  }, async (request) => {
    const { limit, before_id: beforeId } = request.query;
    const rows = app.auditRepo.page(beforeId, limit + 1);
    const entries = rows.slice(0, limit);
    return { entries: entries.map(auditEntryJson), next_before_id: rows.length > limit ? entries.at(-1)!.id : null };
  });
};
export default consoleApi;
