// A signed-in user's own pages under /inbox (a CLIENT lands here after logging in): its conversations in the same
// thread view the administrators have, its credits, usage and send queue, its API keys and event endpoints. Only its own user, whatever the URL says.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Month } from '../../schemas/console';
import { ConversationFilters } from '../../schemas/conversations';
import { MAX_KEYS } from './api-keys';
import { MAX_ENDPOINTS } from './event-endpoints';
import pages, { CONSOLE_SCRIPTS, INBOX_THREAD_SCRIPTS } from '../plugins/pages';
import { monthUsage, neighbourMonths } from '../services/usage';
import { monthKey } from '../support/time';
import { endpointRow, keyRow, waitingRow } from '../views/access-view';
import { usageView } from '../views/console-view';
import { endpointView } from '../views/endpoint-view';
import { inboxThreadPage } from '../views/inbox-view';
import { replyBox, threadPage } from '../views/thread-view';
import { publicUserNow } from '../views/user-view';

const hide = { hide: true };
const html = 'text/html; charset=utf-8';
const WAITING_SHOWN = 50;

const inbox: FastifyPluginAsyncTypebox = async (app) => {
  // The pages' CSP, views and error pages; the static files are served under /admin/static/ already.
  await app.register(pages, { staticFiles: false });
  const zone = () => app.config.timezone;
  /** The layout's navigation: an administrator keeps its own. */
  const nav = (user: NonNullable<FastifyRequest['currentUser']>) =>
    (user.role === 'ADMIN' ? { admin: user } : { client: user });

  app.get('/', {
    preValidation: app.signedInPage,
    schema: { ...hide, querystring: Type.Object(ConversationFilters, { additionalProperties: false }) },
  }, async (request, reply) => {
    const user = request.currentUser!;
    const view = publicUserNow(user, app);
    // The event cursor before the page is read: the live script misses nothing committed while it renders.
    const live = { userId: user.id, after: app.eventsRepo.lastSeq(user.id) };
    const page = inboxThreadPage(threadPage(app.conversationsRepo, user, request.query, app.now(), zone()), user.id);
    return reply.type(html).view('thread', {
      title: 'Inbox', ...nav(user), section: 'inbox', timezone: zone(), page, contactChosen: request.query.contact !== undefined,
      inbox: { creditsText: `${view.credits_used} of ${view.monthly_credits} credits used this month, ${view.credits_remaining} left` },
      live, scripts: INBOX_THREAD_SCRIPTS,
      reply: page.thread && replyBox(page.thread.window, view.credits_remaining),
    });
  });

  app.get('/usage', {
    preValidation: app.signedInPage,
    schema: { ...hide, querystring: Type.Object({ month: Type.Optional(Month) }, { additionalProperties: false }) },
  }, async (request, reply) => {
    const user = request.currentUser!;
    const thisMonth = monthKey(app.now(), zone());
    const month = request.query.month ?? thisMonth;
    const { previous, next } = neighbourMonths(month);
    const href = (m: string) => (m === thisMonth ? '/inbox/usage' : `/inbox/usage?month=${m}`);
    const usage = usageView(monthUsage({ usage: app.usageRepo, credits: app.creditsRepo }, user, month, zone()),
      { previous: href(previous), next: month < thisMonth ? href(next) : null });
    const now = app.now();
    return reply.type(html).view('inbox-usage', {
      title: 'Usage', ...nav(user), section: 'usage', scripts: CONSOLE_SCRIPTS, timezone: zone(), user: publicUserNow(user, app), usage,
      waiting: app.queueRepo.waiting(user.id, WAITING_SHOWN + 1).map((m) => waitingRow(m, now, zone())), waitingShown: WAITING_SHOWN,
    });
  });

  // API keys and event endpoints: every action on the page is a call of the JSON API for the signed-in user itself.
  app.get('/access', {
    preValidation: app.signedInPage,
    schema: { ...hide, querystring: Type.Object({}, { additionalProperties: false }) },
  }, async (request, reply) => {
    const user = request.currentUser!;
    const now = app.now();
    const lastSeq = app.eventsRepo.lastSeq(user.id);
    return reply.type(html).view('access', {
      title: 'API access', ...nav(user), section: 'access', scripts: CONSOLE_SCRIPTS, timezone: zone(), user: { id: user.id, email: user.email },
      keys: app.apiKeysRepo.list(user.id).map((k) => keyRow(k, now, zone())), maxKeys: MAX_KEYS, maxEndpoints: MAX_ENDPOINTS, lastSeq,
      endpoints: app.eventEndpointsRepo.ofUser(user.id)
        .map((row) => endpointRow(endpointView(row, lastSeq, app.eventEndpointsRepo.parked(row.id)), now, zone())),
    });
  });
};
export default inbox;
