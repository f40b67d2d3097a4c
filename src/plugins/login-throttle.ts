// Rate limits of FAILED logins, per (client IP, e-mail) pair, per client IP (an IPv6 client per /64) and per account,
// on @fastify/rate-limit's in-memory store.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { LoginBody } from '../../schemas/auth';
import { AppError } from '../errors';

/** One attacked account must not lock out the others: counted per (client IP, e-mail). */
export const MAX_FAILED_LOGINS = 10;
/** Password spraying (a few guesses on many e-mails): counted per client IP. */
export const MAX_FAILED_LOGINS_PER_IP = 100;
/**
 * Guessing one account from many addresses: counted per e-mail, whatever the address. Once used up, that account's
 * password logins are refused unchecked until the window moves on (otherwise the guesses would go on being checked);
 * existing sessions and the admin CLI are unaffected.
 */
export const MAX_FAILED_LOGINS_PER_ACCOUNT = 30;
export const FAILED_LOGIN_WINDOW_MS = 15 * 60 * 1000;
// Room for many keys, so that failures on random e-mails cannot evict the attacked one's counter.
const CACHE = 100_000;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs a login `attempt` unless the request's (client IP, body e-mail) pair, its client IP or its e-mail has
     * used up its failures (429). An attempt resolving to undefined counts as a failure of all three;
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
  // An IPv6 client is its /64 (the default of normalizeIP): one host hands out a whole /64 to itself at will.
  const clientIp = (request: FastifyRequest) => normalizeIP(request.ip);
  const account = (request: FastifyRequest) => (request.body as LoginBody).email.toLowerCase();
  /** `cache` sizes a limit's own store (the option is passed through, though not in the type). */
  const ownLimit = (max: number, keyGenerator: (request: FastifyRequest) => string) =>
    app.createRateLimit({ max, timeWindow: FAILED_LOGIN_WINDOW_MS, keyGenerator, cache: CACHE } as Parameters<FastifyInstance['createRateLimit']>[0]);
  await app.register(fastifyRateLimit, {
    global: false,
    max: MAX_FAILED_LOGINS,
    timeWindow: FAILED_LOGIN_WINDOW_MS,
    cache: CACHE,
    keyGenerator: (request) => `${clientIp(request)} ${account(request)}`,
  });
  const limits = [
    { check: app.createRateLimit(), pending: new Pending(), scope: 'for this e-mail from your address' },
    { check: ownLimit(MAX_FAILED_LOGINS_PER_IP, clientIp), pending: new Pending(), scope: 'from your address' },
    { check: ownLimit(MAX_FAILED_LOGINS_PER_ACCOUNT, account), pending: new Pending(), scope: 'for this account' },
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
