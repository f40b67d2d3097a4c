// The administrator's HTML pages: login, the users (searchable), a user's conversation thread; the console's other pages
// (a user, operations, audit) come from admin-console.ts. Registered under /admin.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { IdParams } from '../../schemas/common';
import { ConversationFilters } from '../../schemas/conversations';
import pages, { CONSOLE_SCRIPTS, errorPage, LOGIN_REASONS, THREAD_SCRIPTS } from '../plugins/pages';
import { threadPage } from '../views/thread-view';
import { userListRow } from '../views/console-view';
import { publicUserNow } from '../views/user-view';
import adminConsole from './admin-console';

const USERS_PER_PAGE = 100;
const hide = { hide: true }; // pages are not part of the OpenAPI document
const LoginReason = Type.Unsafe<keyof typeof LOGIN_REASONS>(Type.String({ enum: Object.keys(LOGIN_REASONS) }));

const admin: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(pages);
  await app.register(adminConsole);
  const html = 'text/html; charset=utf-8';

  // The script reads ?next= itself; of the query only the fixed text of a known `reason` reaches this page.
  // Other parameters (e.g. a link's utm_*) are ignored: a login form must always open.
  app.get('/login', {
    schema: { ...hide, querystring: Type.Object({ next: Type.Optional(Type.String()), reason: Type.Optional(LoginReason) }) },
  }, async (request, reply) => {
    const { reason } = request.query;
    return reply.type(html).view('login', { title: 'Log in', reason: reason && LOGIN_REASONS[reason] });
  });

  app.get('/', {
    preValidation: app.adminPage,
    schema: {
      ...hide,
      querystring: Type.Object({
        offset: Type.Integer({ minimum: 0, maximum: 1e9, default: 0 }),
        q: Type.Optional(Type.String({ maxLength: 254 })),
      }, { additionalProperties: false }),
    },
  }, async (request, reply) => {
    const { offset } = request.query;
    const q = request.query.q?.trim() || undefined;
    const { users, total } = app.usersRepo.list(USERS_PER_PAGE, offset, q);
    const at = (n: number) => {
      const search = new URLSearchParams({ ...(q ? { q } : {}), ...(n > 0 ? { offset: String(n) } : {}) }).toString();
      return search ? `/admin?${search}` : '/admin';
    };
    return reply.type(html).view('users', {
      title: 'Users', admin: request.currentUser, section: 'users', scripts: CONSOLE_SCRIPTS, timezone: app.config.timezone, total, q: q ?? '',
      users: users.map((u) => userListRow(publicUserNow(u, app), app.usageRepo.lastActivity(u.id), app.now(), app.config.timezone)),
      prevHref: offset > 0 ? at(Math.max(0, offset - USERS_PER_PAGE)) : null,
      nextHref: offset + USERS_PER_PAGE < total ? at(offset + USERS_PER_PAGE) : null,
    });
  });

  app.get('/user/:id/conversation-thread', {
    preValidation: app.adminPage,
    schema: { ...hide, params: IdParams, querystring: Type.Object(ConversationFilters, { additionalProperties: false }) },
  }, async (request, reply) => {
    const user = app.usersRepo.findById(request.params.id);
    if (!user) return errorPage(reply, 404, 'No such user', `There is no user with id ${request.params.id}. It may have been deleted.`);
    // The event cursor before the page is read: the live script misses nothing committed while it renders.
    const live = { userId: user.id, after: app.eventsRepo.lastSeq(user.id) };
    const page = threadPage(app.conversationsRepo, user, request.query, app.now(), app.config.timezone);
    return reply.type(html).view('thread', {
      title: user.email, admin: request.currentUser, timezone: app.config.timezone, page, contactChosen: request.query.contact !== undefined,
      live, scripts: THREAD_SCRIPTS,
    });
  });
};
export default admin;
