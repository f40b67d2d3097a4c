// What the HTML pages of the context it is registered in need: helmet with a strict CSP, Eta views from
// templates/, the static CSS/JS under `static/`, the admin-session hook and errors rendered as pages.
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Eta } from 'eta';
import { projectRoot } from '../config';
import { AppError, unauthorized } from '../errors';
import { helmetHook } from './security-headers';

declare module 'fastify' {
  interface FastifyInstance {
    /** preValidation hook of a page: no valid session -> 302 to the login page; not an ADMIN -> 403 page. */
    adminPage: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** preValidation hook of a user's own pages (/inbox): no valid session -> 302 to the login page; any role. */
    signedInPage: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

const TEMPLATES = join(projectRoot, 'templates');
const SELF = ["'self'"];

/** The static scripts (under templates/static/) a console page with API forms loads besides admin.js. */
export const CONSOLE_SCRIPTS = ['console.js'];
/** The thread page's: the live thread (the user's event stream) and, on a user's own inbox, the reply box. */
export const THREAD_SCRIPTS = ['thread-live.js'];
export const INBOX_THREAD_SCRIPTS = ['thread-live.js', 'thread-reply.js'];

/** Why the login page opened (`?reason=`): fixed texts, so nothing from the request is shown. */
export const LOGIN_REASONS = {
  disabled: 'Your account has been disabled. Another administrator can enable it again.',
  ended: 'Your session has ended: it expired, your password was changed or your account was deleted.',
} as const;

/** Renders `error.eta` with `status`; every page error ends here. */
export function errorPage(reply: FastifyReply, status: number, title: string, text: string) {
  const user = reply.request.currentUser;
  return reply.code(status).type('text/html; charset=utf-8').view('error', {
    title: `${status} · ${title}`, status, heading: title, text, signedIn: !!user,
    admin: user?.role === 'ADMIN' ? user : null, client: user && user.role !== 'ADMIN' ? user : null,
  });
}

function describe(error: FastifyError): [number, string, string] {
  const item = error.validation?.[0];
  if (item) {
    const params = item.params as { additionalProperty?: string; allowedValues?: string[] };
    const field = item.instancePath.slice(1) || params.additionalProperty || 'a value';
    const problem = item.keyword === 'additionalProperties' ? 'is not a parameter of this page'
      : params.allowedValues ? `must be one of: ${params.allowedValues.join(', ')}` : item.message ?? 'is invalid';
    return [400, 'This link has a value the page does not know', `“${field}” ${problem}.`];
  }
  const status = error instanceof AppError ? error.statusCode : error.statusCode ?? 500;
  if (status >= 400 && status < 500) return [status, STATUS_CODES[status] ?? 'Bad request', error.message];
  return [500, 'Something went wrong', 'The error is logged with this request id.'];
}

/** `staticFiles: false` where another context already serves /admin/static/ (the pages link there only). */
export default fp(async function pages(app: FastifyInstance, options: { staticFiles?: boolean }) {
  // Helmet again, in this context only: the app-wide headers with the pages' CSP instead of the API's.
  app.addHook('onRequest', helmetHook({
    defaultSrc: SELF, scriptSrc: SELF, scriptSrcAttr: ["'none'"], styleSrc: SELF, imgSrc: [...SELF, 'data:'], mediaSrc: SELF, connectSrc: SELF,
    fontSrc: SELF, formAction: SELF, frameAncestors: ["'none'"], objectSrc: ["'none'"], baseUri: SELF,
  }));
  await app.register(fastifyView, { engine: { eta: new Eta({ views: TEMPLATES, autoEscape: true }) }, root: TEMPLATES });
  if (options.staticFiles !== false) {
    await app.register(fastifyStatic, { root: join(TEMPLATES, 'static'), prefix: '/static/', decorateReply: false, index: false });
  }

  /** Authenticates a page's request (a session JWT, as the API takes it); false after answering the redirect to log in. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    try {
      await app.authenticate(request);
      // Pages take a session (a JWT) only: whatever else authenticate may accept for the API (API keys) opens no page.
      if (!app.sessionClaims(request)) throw unauthorized('Pages need a session');
      return true;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const reason = error.code === 'ACCOUNT_DISABLED' ? '&reason=disabled' : request.cookies.token ? '&reason=ended' : '';
      void reply.redirect(`/admin/login?next=${encodeURIComponent(request.url)}${reason}`, 302);
      return false;
    }
  }

  app.decorate('adminPage', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!(await signedIn(request, reply))) return reply;
    if (request.currentUser!.role !== 'ADMIN') {
      return errorPage(reply, 403, 'Administrators only', `You are logged in as ${request.currentUser!.email}, which is not an administrator account. `
        + 'Your own conversations, credits and usage are in your inbox.');
    }
  });
  app.decorate('signedInPage', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!(await signedIn(request, reply))) return reply;
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const [status, title, text] = describe(error);
    if (status === 500) request.log.error({ err: error }, 'page error');
    return errorPage(reply, status, title, status === 500 ? `${text} (${request.id})` : text);
  });
  app.setNotFoundHandler((request, reply) => errorPage(reply, 404, 'Page not found', `There is no page at ${request.url.split('?')[0]}.`));
}, { name: 'pages', dependencies: ['auth'] });
