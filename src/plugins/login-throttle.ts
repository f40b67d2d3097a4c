// Rate limits of FAILED logins, per (client IP, e-mail) pair and per client IP, on @fastify/rate-limit's in-memory store.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { LoginBody } from '../../schemas/auth';
import { AppError } from '../errors';

/** One attacked account must not lock out the others: counted per (client IP, e-mail). */
export const MAX_FAILED_LOGINS = 10;
/** Password spraying (a few guesses on many e-mails): counted per client IP. */
export const MAX_FAILED_LOGINS_PER_IP = 100;
export const FAILED_LOGIN_WINDOW_MS = 15 * 60 * 1000;
// Room for many keys, so that failures on random e-mails cannot evict the attacked one's counter.
const CACHE = 100_000;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs a login `attempt` unless the request's (client IP, body e-mail) pair or its client IP has
     * used up its failures (429). An attempt resolving to undefined counts as a failure of both;
     * successes and attempts that throw never count.
     */
    throttleLogin: <T>(request: FastifyRequest, attempt: () => Promise<T | undefined>) => Promise<T | undefined>;
  }
}

const tooManyAttempts = (retryAfterSeconds: number, scope: string) => new AppError(429, 'TOO_MANY_LOGIN_ATTEMPTS',
  `Too many failed logins ${scope}; retry in ${retryAfterSeconds} s`, undefined,
  { 'retry-after': String(retryAfterSeconds) });

type Check = ReturnType<FastifyInstance['createRateLimit']>;
type Status = Awaited<ReturnType<Check>>;

/** Attempts being verified right now, per key of one limit. */
class Pending {
  private readonly counts = new Map<string, number>();
  of = (key: string) => this.counts.get(key) ?? 0;
  add(key: string): void {
    this.counts.set(key, this.of(key) + 1);
  }
  remove(key: string): void {
    const left = this.of(key) - 1;
    if (left <= 0) this.counts.delete(key);
    else this.counts.set(key, left);
  }
}

export default fp(async function loginThrottle(app: FastifyInstance) {
  const clientIp = (request: FastifyRequest) => normalizeIP(request.ip);
  await app.register(fastifyRateLimit, {
    global: false,
    max: MAX_FAILED_LOGINS,
    timeWindow: FAILED_LOGIN_WINDOW_MS,
    cache: CACHE,
    keyGenerator: (request) => `${clientIp(request)} ${(request.body as LoginBody).email.toLowerCase()}`,
  });
  const limits = [
    { check: app.createRateLimit(), pending: new Pending(), scope: 'for this e-mail from your address' },
    {
      // `cache` sizes this limit's own store (the option is passed through, though not in the type).
      check: app.createRateLimit({ max: MAX_FAILED_LOGINS_PER_IP, timeWindow: FAILED_LOGIN_WINDOW_MS, keyGenerator: clientIp, cache: CACHE } as Parameters<FastifyInstance['createRateLimit']>[0]),
      pending: new Pending(),
      scope: 'from your address',
    },
  ];
  // Bumped whenever an attempt's outcome has been counted. Attempts being verified count against the
  // limits too (argon2 takes ~55 ms: parallel guesses would otherwise all pass before the first
  // failure is counted); a read that an outcome overtook is repeated, so none is counted twice or never.
  let settled = 0;

  async function statuses(request: FastifyRequest): Promise<Status[]> {
    for (;;) {
      const seen = settled;
      const read = await Promise.all(limits.map((limit) => limit.check(request, { increment: false })));
      if (seen === settled) return read;
    }
  }

  app.decorate('throttleLogin', async <T>(request: FastifyRequest, attempt: () => Promise<T | undefined>) => {
    const read = await statuses(request);
    // Checked and reserved with no await in between: concurrent attempts see each other's reservation.
    limits.forEach((limit, i) => {
      const status = read[i]!;
      if (status.isAllowed || status.remaining - limit.pending.of(status.key) > 0) return;
      // No failure counted yet (all still being verified): they are about to start a full window.
      throw tooManyAttempts(status.ttlInSeconds || FAILED_LOGIN_WINDOW_MS / 1000, limit.scope);
    });
    limits.forEach((limit, i) => limit.pending.add(read[i]!.key));
    try {
      const result = await attempt();
      if (result === undefined) await Promise.all(limits.map((limit) => limit.check(request)));
      return result;
    } finally {
      settled++;
      limits.forEach((limit, i) => limit.pending.remove(read[i]!.key));
    }
  });
}, { name: 'login-throttle' });
