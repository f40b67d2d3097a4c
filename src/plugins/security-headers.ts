// Security headers (helmet) on every response, and `Cache-Control: no-store` on answers to an authenticated caller.
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import fp from 'fastify-plugin';

type Directives = Record<string, string[] | null>;

/** JSON and text answers load nothing: the strictest policy. No site may frame any answer. */
const API_DIRECTIVES: Directives = {
  defaultSrc: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"], frameAncestors: ["'none'"],
};

/** Helmet's defaults with `directives` as the whole CSP and framing refused (helmet's default allows the same origin). */
export function helmetOptions(directives: Directives): HelmetOptions {
  return {
    frameguard: { action: 'deny' },
    contentSecurityPolicy: {
      useDefaults: false,
      // Self-hosters often serve plain HTTP on a LAN: forcing https sub-requests would break the pages there.
      directives: { ...directives, upgradeInsecureRequests: null },
    },
  };
}

/**
 * An onRequest hook setting helmet's headers. The middleware is built once here: @fastify/helmet builds it again
 * on every request (re-parsing the CSP), which cost about 7 % of the CPU of a small request.
 */
export function helmetHook(directives: Directives): onRequestHookHandler {
  const apply = helmet(helmetOptions(directives));
  return (request, reply, done) => apply(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
}

/** A CSP as the header text, for places that take the header rather than helmet's options (the Swagger UI). */
export function cspHeader(directives: Directives): string {
  return Object.entries(directives)
    .filter((entry): entry is [string, string[]] => entry[1] !== null)
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join('; ');
}

/** For the few answers written outside Fastify's hooks (unroutable URLs, requests Node cannot parse or that time out). */
export const BASELINE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': cspHeader(API_DIRECTIVES), 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY',
};

/**
 * Registered after the auth plugin: its onSend hook writes Set-Cookie before ours looks for it. A page context
 * registers helmet again with its own CSP, and the Swagger UI sets its own CSP header.
 */
export default fp(async function securityHeaders(app: FastifyInstance) {
  app.addHook('onRequest', helmetHook(API_DIRECTIVES));
  // What one caller may see (a session cookie, its users, its messages) never stays in a shared or browser cache.
  app.addHook('onSend', async (request, reply) => {
    if (request.currentUser || reply.hasHeader('set-cookie')) reply.header('cache-control', 'no-store');
  });
}, { name: 'security-headers', dependencies: ['auth'] });
