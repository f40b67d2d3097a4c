// Cookies, JWT signing, and the hooks that authenticate a request and check its role (SPEC §3).
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../db/tables';
import { accountDisabled, forbidden, unauthorized } from '../errors';
import { authenticateKey, isApiKey } from './api-key-auth';

export type Role = 'ADMIN' | 'CLIENT';
export interface TokenClaims { sub: string; role: Role; ver: number; jti: string }
/** The claims of a genuine, unexpired session JWT (its user and revocation not checked yet). */
export interface SessionClaims extends TokenClaims { iat: number; exp: number }

/** Every session JWT carries these; one without any of them is refused (jti: sessions before logout could end them). */
const REQUIRED_CLAIMS = ['sub', 'ver', 'jti', 'iat', 'exp'];
// Our own clock signs, so an iat from the future means a forged lifetime; a minute covers a clock step back.
const FUTURE_IAT_TOLERANCE_MS = 60_000;
const USER_ID = /^[1-9][0-9]{0,15}$/;

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
    /** The claims of the request's JWT if it is genuine, unexpired and complete; undefined otherwise. */
    sessionClaims: (request: FastifyRequest) => SessionClaims | undefined;
  }
  interface FastifyRequest {
    /** The authenticated user, re-read from the database for this request. */
    currentUser: UserRow | null;
    /** The API key the request authenticated with (null: a session JWT). */
    apiKeyId: number | null;
  }
}

/** The token of an `Authorization: Bearer <token>` header, the scheme in any case (RFC 7235); undefined for any other form. */
export const bearerToken = (header: string | undefined): string | undefined => /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];

/** Header first, then the cookie, then the `token` field of a JSON POST body. */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) return bearerToken(header) ?? '';
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
    // maxAge counts from iat: a token signed with this key but a longer lifetime still ends after JWT_TTL.
    // Verified tokens are remembered (by their hash, each until its exp or maximum age): a client sending with the
    // same token skips the HMAC and the claim checks. Revocation and the user's state are still read every request.
    verify: { algorithms: ['HS256'], requiredClaims: REQUIRED_CLAIMS, maxAge: options.ttlSeconds, cache: 1000, cacheTTL: 600_000 },
  });
  app.decorateRequest('currentUser', null);
  app.decorateRequest('apiKeyId', null);
  // Revocations of sessions expired while the process was down.
  app.sessionsRepo.prune(Date.now());

  app.decorate('issueToken', (user: UserRow) =>
    app.jwt.sign({ sub: String(user.id), role: user.role, ver: user.tokenVersion, jti: randomBytes(18).toString('base64url') }));

  app.decorate('sessionClaims', (request: FastifyRequest) => {
    const token = tokenOf(request);
    if (!token) return undefined;
    let claims: SessionClaims;
    try {
      claims = app.jwt.verify<SessionClaims>(token);
    } catch {
      return undefined;
    }
    const complete = typeof claims.sub === 'string' && USER_ID.test(claims.sub) && Number.isSafeInteger(claims.ver)
      && typeof claims.jti === 'string' && claims.jti.length > 0 && claims.jti.length <= 128
      && claims.iat * 1000 <= Date.now() + FUTURE_IAT_TOLERANCE_MS;
    return complete ? claims : undefined;
  });

  app.decorate('authenticate', async (request: FastifyRequest) => {
    if (!tokenOf(request)) throw unauthorized();
    if (isApiKey(tokenOf(request)!)) return authenticateKey(app, request);
    const claims = app.sessionClaims(request);
    if (!claims) throw unauthorized('Token is invalid or expired');
    const user = app.usersRepo.findById(Number(claims.sub));
    if (!user || claims.ver !== user.tokenVersion || app.sessionsRepo.isRevoked(claims.jti)) {
      throw unauthorized('Session has ended; log in again');
    }
    if (!user.isActive) throw accountDisabled();
    request.currentUser = user;
  });

  app.decorate('requireRole', (...roles: Role[]) => async (request: FastifyRequest) => {
    await app.authenticate(request);
    if (!roles.includes(request.currentUser!.role)) throw forbidden();
  });
}, { name: 'auth', dependencies: ['db'] });
