// Cookies, JWT signing, and the hooks that authenticate a request and check its role (SPEC §3).
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { UserRow } from '../db/tables';
import { AppError, accountDisabled, forbidden, unauthorized } from '../errors';
import { authenticateKey, isApiKey } from './api-key-auth';

export type Role = 'ADMIN' | 'CLIENT';
/** `epoch`: the user row's random session epoch when the JWT was signed (a row created afresh, e.g. after a restore, has another). */
export interface TokenClaims { sub: string; role: Role; ver: number; jti: string; epoch: string }
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

/** Methods that change nothing: a cross-site GET may follow a link, it never acts. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const crossSite = () => new AppError(403, 'CROSS_SITE_REQUEST',
  'A request from another site may not act with this gateway\'s session cookie; send it from the gateway\'s own pages or with an Authorization header');

/** `scheme://host[:port]` with default ports dropped, or undefined when `value` is no origin (e.g. `null`). */
function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a browser sent this request from another site: its Origin names another origin than the gateway's own (the
 * request's scheme and host as Fastify computes them, TRUST_PROXY honoured), or, without Origin, Sec-Fetch-Site says
 * `cross-site` or `same-site`. Neither header (curl, scripts): not a browser's, not cross-site.
 */
function fromAnotherSite(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const own = originOf(`${request.protocol}://${request.host}`);
    return own === undefined || originOf(origin) !== own;
  }
  const site = request.headers['sec-fetch-site'];
  return site === 'cross-site' || site === 'same-site';
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
  // A request that would act with the cookie (no Authorization header, which comes first) is refused from another site,
  // before its body is read: a plain HTML form on any site could otherwise upload, replay or log out everywhere.
  // Callback-style: it runs on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (SAFE_METHODS.has(request.method) || request.headers.authorization !== undefined || !request.cookies.token) return done();
    done(fromAnotherSite(request) ? crossSite() : undefined);
  });
  if (!app.config.cookieSecure) {
    let warned = false;
    app.addHook('onRequest', (request, _reply, done) => {
      if (!warned && request.protocol === 'https') {
        warned = true;
        request.log.warn('COOKIE_SECURE=false but this request came over HTTPS: the session cookie is also sent over plain HTTP; set COOKIE_SECURE=true');
      }
      done();
    });
  }
  // Revocations of sessions expired while the process was down.
  app.sessionsRepo.prune(Date.now());

  app.decorate('issueToken', (user: UserRow) =>
    app.jwt.sign({
      sub: String(user.id), role: user.role, ver: user.tokenVersion, jti: randomBytes(18).toString('base64url'), epoch: user.sessionEpoch,
    }));

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
    // A JWT of another row with this id (a restored past) or from before epochs existed (one new login) has ended too.
    if (!user || claims.ver !== user.tokenVersion || claims.epoch !== user.sessionEpoch || app.sessionsRepo.isRevoked(claims.jti)) {
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
