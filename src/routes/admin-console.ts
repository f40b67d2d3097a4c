// The console's administrator pages: a user (edit, token, password, usage, delete), operations (callbacks to look at
// and replay) and the audit log. Every action on them is a call of the JSON API from templates/static/console.js.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { IdParams } from '../../schemas/common';
import { Month } from '../../schemas/console';
import { CONSOLE_SCRIPTS, errorPage } from '../plugins/pages';
import { monthUsage, neighbourMonths } from '../services/usage';
import { monthKey } from '../support/time';
import { misroutedCallbacks } from '../webhooks/misrouted';
import { endpointRow, waitingRow } from '../views/access-view';
import { auditEntryJson } from '../views/audit-view';
import { auditRow, failedCallbackRow, misroutedRow, usageView, when } from '../views/console-view';
import { endpointView } from '../views/endpoint-view';
import { publicUserNow } from '../views/user-view';

const hide = { hide: true };
const AUDIT_PER_PAGE = 50;
const CALLBACKS_SHOWN = 50;
const ENDPOINTS_SHOWN = 200;
const WAITING_SHOWN = 50;
const html = 'text/html; charset=utf-8';

const adminConsole: FastifyPluginAsyncTypebox = async (app) => {
  const zone = () => app.config.timezone;
  const ownerOf = (id: number) => {
    const user = app.usersRepo.findById(id);
    return { id, email: user?.email ?? `user ${id}` };
  };
  /** Each user's send queue: depth, oldest waiting message, and whether its number is paused (throttled by the network). */
  const queuesNow = (now: Date) => {
    const paused = new Map(app.sendQueue.pauses().map((p) => [p.userId, p.pausedUntil]));
    return app.queueRepo.stats().map((q) => {
      const until = paused.get(q.userId) ?? 0;
      const user = app.usersRepo.findById(q.userId);
      return {
        owner: ownerOf(q.userId), phoneNumberId: user?.messagingPhoneNumberId ?? null, rate: user?.messagingRate ?? null, depth: q.depth,
        oldest: when(q.oldest, now, zone()), pausedUntil: until > now.getTime() ? when(until, now, zone()) : null,
      };
    });
  };

  app.get('/user/:id', {
    preValidation: app.adminPage,
    schema: { ...hide, params: IdParams, querystring: Type.Object({ month: Type.Optional(Month) }, { additionalProperties: false }) },
  }, async (request, reply) => {
    const row = app.usersRepo.findById(request.params.id);
    if (!row) return errorPage(reply, 404, 'No such user', `There is no user with id ${request.params.id}. It may have been deleted.`);
    const now = app.now();
    const thisMonth = monthKey(now, zone());
    const month = request.query.month ?? thisMonth;
    const { previous, next } = neighbourMonths(month);
    const href = (m: string) => (m === thisMonth ? `/admin/user/${row.id}#usage` : `/admin/user/${row.id}?month=${m}#usage`);
    const usage = usageView(monthUsage({ usage: app.usageRepo, credits: app.creditsRepo }, row, month, zone()),
      { previous: href(previous), next: month < thisMonth ? href(next) : null });
    return reply.type(html).view('user', {
      title: row.email, admin: request.currentUser, section: 'users', scripts: CONSOLE_SCRIPTS, timezone: zone(),
      user: publicUserNow(row, app), self: row.id === request.currentUser!.id, usage,
      holdings: app.usageRepo.holdings(row.id),
      waiting: app.queueRepo.waiting(row.id, WAITING_SHOWN + 1).map((m) => waitingRow(m, now, zone())), waitingShown: WAITING_SHOWN,
      changes: app.auditRepo.ofTarget(row.id, 10).map((r) => auditRow(auditEntryJson(r), now, zone())),
    });
  });

  app.get('/audit', {
    preValidation: app.adminPage,
    schema: {
      ...hide,
      querystring: Type.Object({ before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) }, { additionalProperties: false }),
    },
  }, async (request, reply) => {
    const rows = app.auditRepo.page(request.query.before_id, AUDIT_PER_PAGE + 1);
    const shown = rows.slice(0, AUDIT_PER_PAGE);
    const now = app.now();
    return reply.type(html).view('audit', {
      title: 'Audit log', admin: request.currentUser, section: 'audit', timezone: zone(),
      entries: shown.map((r) => auditRow(auditEntryJson(r), now, zone())),
      newestHref: request.query.before_id === undefined ? null : '/admin/audit',
      olderHref: rows.length > AUDIT_PER_PAGE ? `/admin/audit?before_id=${shown.at(-1)!.id}` : null,
    });
  });

  app.get('/operations', {
    preValidation: app.adminPage,
    schema: { ...hide, querystring: Type.Object({}, { additionalProperties: false }) },
  }, async (request, reply) => {
    const now = app.now();
    return reply.type(html).view('operations', {
      title: 'Operations', admin: request.currentUser, section: 'operations', scripts: CONSOLE_SCRIPTS, timezone: zone(),
      misrouted: misroutedCallbacks(app.webhookEventsRepo, CALLBACKS_SHOWN)
        .map((e) => misroutedRow(e, now, zone(), (number) => app.usersRepo.findByPhoneNumberId(number))),
      failed: app.webhookEventsRepo.page({ states: ['failed', 'dead'], limit: CALLBACKS_SHOWN }).map((e) => failedCallbackRow(e, now, zone())),
      backlog: app.webhookEventsRepo.backlog(),
      endpoints: app.eventEndpointsRepo.all(ENDPOINTS_SHOWN).map((row) => ({
        owner: ownerOf(row.userId),
        ...endpointRow(endpointView(row, app.eventsRepo.lastSeq(row.userId), app.eventEndpointsRepo.parked(row.id)), now, zone()),
      })),
      queues: queuesNow(now),
    });
  });
};
export default adminConsole;
