// Security headers (helmet) on every response, and `Cache-Control: no-store` on answers to an authenticated caller.
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Only servers call the route (the network's webhook, health probes), never a browser: its answers carry the
     * baseline headers (CSP, no framing, no sniffing) rather than helmet's whole set, which guards what a browser does
     * with a page and is header work (set, checked, written) on the busiest routes.
     */
    calledByMachines?: boolean;
  }
}

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

/** The headers helmet sets with these directives: they depend on nothing of the request, so they are taken once. */
export function helmetHeaders(directives: Directives): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: () => undefined,
  };
  let failure: unknown;
  helmet(helmetOptions(directives))({} as never, response as never, (error?: unknown) => void (failure = error));
  if (failure !== undefined) throw failure;
  return headers;
}

/**
 * An onRequest hook setting helmet's headers, computed once (the baseline only on routes the network calls): running
 * helmet's middleware on every request (let alone rebuilding it, as @fastify/helmet does) cost several per cent of the
 * CPU of a small request.
 */
export function helmetHook(directives: Directives): onRequestHookHandler {
  const headers = helmetHeaders(directives);
  return (request, reply, done) => {
    reply.headers(request.routeOptions.config?.calledByMachines ? BASELINE_HEADERS : headers);
    done();
  };
}

/** A CSP as the header text, for places that take the header rather than helmet's options (the Swagger UI). */
export function cspHeader(directives: Directives): string {
  return Object.entries(directives)
    .filter((entry): entry is [string, string[]] => entry[1] !== null)
    .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
    .join('; ');
}

/**
 * What every answer carries: the whole of it on the routes only servers call (`calledByMachines`), and on the few
 * answers written outside Fastify's hooks (unroutable URLs, requests Node cannot parse or that time out).
 */
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
  // Callback-style: an async onSend costs a promise and a microtask turn on every answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.currentUser || reply.hasHeader('set-cookie')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}, { name: 'security-headers', dependencies: ['auth'] });
