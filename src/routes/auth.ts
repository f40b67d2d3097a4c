// Login, logout and the caller's own user object (SPEC §3).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { LoginBody, LogoutBody, LogoutQuery, Message, SessionSecurity } from '../../schemas/auth';
import { errors, withHeaders } from '../../schemas/common';
import { User } from '../../schemas/users';
import { AppError, accountDisabled } from '../errors';
import loginThrottle from '../plugins/login-throttle';
import { checkCredentials } from '../services/login';
import { publicUserNow } from '../views/user-view';

const invalidCredentials = () => new AppError(401, 'INVALID_CREDENTIALS', 'E-mail or password is wrong');

const auth: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(loginThrottle);
  const cookie = {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: app.config.cookieSecure,
  } as const;

  app.post('/api/login', {
    schema: {
      tags: ['auth'],
      operationId: 'login',
      summary: 'Log in',
      description: 'Sets the `token` cookie (HttpOnly, SameSite=Lax, Path=/, Max-Age = the session lifetime). '
        + 'Wrong e-mail or password: 401 `INVALID_CREDENTIALS`; a disabled account: 403 `ACCOUNT_DISABLED` (only with the right password). '
        + 'Repeated failures per client IP and e-mail, per client IP (an IPv6 client: its /64), or per account from all addresses '
        + '(30 in 15 minutes; then no password of that account is checked until the window moves on): 429 `TOO_MANY_LOGIN_ATTEMPTS`; '
        + 'too many logins being checked at once: 503 `BUSY`. Both carry `Retry-After`.',
      security: [],
      body: LoginBody,
      response: {
        200: withHeaders(Message, { 'set-cookie': Type.String({ description: 'The session: `token=<JWT>; Max-Age=…; Path=/; HttpOnly; SameSite=Lax`' }) }),
        ...errors(400, 401, 403, 413, 415, 429, 503),
      },
    },
  }, async (request, reply) => {
    const { email, password } = request.body;
    const user = await app.throttleLogin(request, () => checkCredentials(app.usersRepo, email, password, app.passwords.verify));
    if (!user) throw invalidCredentials();
    // Only a caller who knows the password learns that the account is disabled.
    if (!user.isActive) throw accountDisabled();
    reply.setCookie('token', app.issueToken(user), { ...cookie, maxAge: app.sessionSeconds });
    return { message: 'Login success' };
  });

  app.post('/api/logout', {
    schema: {
      tags: ['auth'],
      operationId: 'logout',
      summary: 'Log out',
      description: 'Ends the presented session (every session of the user with `all=true`) and clears the `token` cookie. '
        + 'The body may be absent. Without `all`, a missing, invalid or expired token still answers 200: the caller is logged out '
        + 'either way; `all=true` needs a valid session (401/403 otherwise, the cookie cleared all the same).',
      // A session is optional: used when present.
      security: [{}, ...SessionSecurity],
      querystring: LogoutQuery,
      body: LogoutBody,
      response: {
        200: withHeaders(Message, { 'set-cookie': Type.String({ description: 'Clears the cookie: `token=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; …`' }) }),
        ...errors(400, 401, 403, 413, 415, 503),
      },
    },
  }, async (request, reply) => {
    reply.clearCookie('token', cookie);
    if (request.query.all) {
      // Ending every session needs a session that is valid now (401/403 otherwise, the cookie cleared all the same).
      await app.authenticate(request);
      await app.writer.write(() => app.usersRepo.endAllSessions(request.currentUser!.id));
      app.eventStreams.recheck(request.currentUser!.id);
      return { message: 'Logged out of every session' };
    }
    const claims = app.sessionClaims(request);
    if (claims) {
      // Kept until the JWT would be refused anyway; JWT times follow the system clock, as its verification does.
      const expiresAt = Math.min(claims.exp, claims.iat + app.sessionSeconds) * 1000;
      await app.writer.write(() => app.sessionsRepo.revoke(claims.jti, expiresAt, Date.now()));
      app.eventStreams.recheck(Number(claims.sub));
    }
    return { message: 'Logged out' };
  });

  app.get('/api/me', {
    preValidation: app.authenticate,
    schema: {
      tags: ['auth'],
      operationId: 'getMe',
      summary: "The caller's user object",
      security: SessionSecurity,
      response: { 200: User, ...errors(401, 403) },
    },
  }, async (request) => publicUserNow(request.currentUser!, app));
};
export default auth;
