// Cookies, JWT signing, and the hooks that authenticate a request and check its role (SPEC §3).
import fastifyCookie from '@fastify/cookie';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../db/tables';
import { accountDisabled, forbidden, unauthorized } from '../errors';

export type Role = 'ADMIN' | 'CLIENT';
export interface TokenClaims { sub: string; role: Role; ver: number }

declare module '@fastify/jwt' {
  interface FastifyJWT { payload: TokenClaims }
}
declare module 'fastify' {
  interface FastifyInstance {
    /** preValidation hook: the caller must hold a valid JWT of an existing, active user. */
    authenticate: (request: FastifyRequest) => Promise<void>;
    /** preValidation hook: authenticate, then require one of `roles`. */
    requireRole: (...roles: Role[]) => (request: FastifyRequest) => Promise<void>;
    /** Signs a session JWT for `user`. */
    issueToken: (user: UserRow) => string;
  }
  interface FastifyRequest {
    /** The authenticated user, re-read from the database for this request. */
    currentUser: UserRow | null;
  }
}

/** Header first, then the cookie, then the `token` field of a JSON POST body. */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match?.[1] ?? '';
  }
  const cookie = request.cookies.token;
  if (cookie) return cookie;
  const body = request.body as { token?: unknown } | undefined;
  if (request.method === 'POST' && body && typeof body === 'object' && typeof body.token === 'string') return body.token;
  return undefined;
}

export default fp(async function auth(app: FastifyInstance, options: { secret: string; ttlSeconds: number }) {
  await app.register(fastifyCookie);
  await app.register(fastifyJwt, {
    secret: options.secret,
    sign: { algorithm: 'HS256', expiresIn: options.ttlSeconds },
    verify: { algorithms: ['HS256'] },
  });
  app.decorateRequest('currentUser', null);

  app.decorate('issueToken', (user: UserRow) =>
    app.jwt.sign({ sub: String(user.id), role: user.role, ver: user.tokenVersion }));

  app.decorate('authenticate', async (request: FastifyRequest) => {
    const token = tokenOf(request);
    if (!token) throw unauthorized();
    let claims: TokenClaims;
    try {
      claims = app.jwt.verify<TokenClaims>(token);
    } catch {
      throw unauthorized('Token is invalid or expired');
    }
    const id = Number(claims.sub);
    const user = Number.isSafeInteger(id) ? app.usersRepo.findById(id) : undefined;
    if (!user || claims.ver !== user.tokenVersion) throw unauthorized('Session has ended; log in again');
    if (!user.isActive) throw accountDisabled();
    request.currentUser = user;
  });

  app.decorate('requireRole', (...roles: Role[]) => async (request: FastifyRequest) => {
    await app.authenticate(request);
    if (!roles.includes(request.currentUser!.role)) throw forbidden();
  });
}, { name: 'auth', dependencies: ['db'] });
