// Rate limit of FAILED logins per (client IP, e-mail) pair, on @fastify/rate-limit's in-memory store.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { LoginBody } from '../../schemas/auth';
import { AppError } from '../errors';

export const MAX_FAILED_LOGINS = 10;
export const FAILED_LOGIN_WINDOW_MS = 15 * 60 * 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs a login `attempt` unless the request's (client IP, body e-mail) pair has used up its
     * failures (429). An attempt resolving to undefined counts as a failure; successes never count.
     */
    throttleLogin: <T>(request: FastifyRequest, attempt: () => Promise<T | undefined>) => Promise<T | undefined>;
  }
}

const tooManyAttempts = (retryAfterSeconds: number) => new AppError(429, 'TOO_MANY_LOGIN_ATTEMPTS',
  `Too many failed logins for this e-mail from your address; retry in ${retryAfterSeconds} s`, undefined,
  { 'retry-after': String(retryAfterSeconds) });

export default fp(async function loginThrottle(app: FastifyInstance) {
  await app.register(fastifyRateLimit, {
    global: false,
    max: MAX_FAILED_LOGINS,
    timeWindow: FAILED_LOGIN_WINDOW_MS,
    // Room for many pairs, so that failures on random e-mails cannot evict the attacked one's counter.
    cache: 100_000,
    keyGenerator: (request) => `${normalizeIP(request.ip)} ${(request.body as LoginBody).email.toLowerCase()}`,
  });
  const failures = app.createRateLimit();
  // Attempts being verified right now: without them, parallel guesses would all pass the check
  // before the first failure is counted (argon2 takes ~55 ms).
  const inFlight = new Map<string, number>();

  app.decorate('throttleLogin', async <T>(request: FastifyRequest, attempt: () => Promise<T | undefined>) => {
    const status = await failures(request, { increment: false });
    if (status.isAllowed) return attempt();
    const { key } = status;
    const pending = inFlight.get(key) ?? 0;
    if (status.remaining - pending <= 0) throw tooManyAttempts(Math.max(1, status.ttlInSeconds));
    inFlight.set(key, pending + 1);
    try {
      const result = await attempt();
      if (result === undefined) await failures(request);
      return result;
    } finally {
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left === 0) inFlight.delete(key);
      else inFlight.set(key, left);
    }
  });
}, { name: 'login-throttle' });
