// buildApp(config): infrastructure plugins first, then one plugin per route group, in order.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { durationSeconds, type Config } from './config';
import { resolveJwtSecret } from './support/jwt-secret';
import { LazyChildLogger, type ParentLogger } from './support/lazy-logger';
import type { HashSlots } from './services/passwords';
import authPlugin from './plugins/auth';
import dbPlugin from './plugins/db';
import errorHandler, { clientError, routingError } from './plugins/error-handler';
import mediaArchive from './plugins/media-archive';
import messagingPlugin from './plugins/messaging';
import metricsPlugin from './plugins/metrics';
import openapi from './plugins/openapi';
import passwordsPlugin from './plugins/passwords';
import retentionPlugin from './plugins/retention';
import sendSettlement from './plugins/send-settlement';
import pacingPlugin from './plugins/pacing';
import securityHeaders from './plugins/security-headers';
import slowClients, { slowClientOptions } from './plugins/slow-clients';
import validation from './plugins/validation';
import webhookInbox from './plugins/webhook-inbox';
import eventsPlugin, { type EventsPluginOptions } from './plugins/events';
import healthRoutes from './routes/health';
import metricsRoutes from './routes/metrics';
import mediaRoutes from './routes/media';
import messageRoutes from './routes/messages';
import messageQueueRoutes from './routes/message-queue';
import oneMessageRoutes from './routes/message';
import mediaUploadRoutes from './routes/media-upload';
import type { UploadFairness } from './services/upload-fairness';
import webhookRoutes from './routes/webhook';
import webhookEventRoutes from './routes/webhook-events';
import conversationRoutes from './routes/conversations';
import adminRoutes from './routes/admin';
import inboxRoutes from './routes/inbox';
import authRoutes from './routes/auth';
import consoleApiRoutes from './routes/console-api';
import userRoutes from './routes/users';
import eventRoutes from './routes/events';
import apiKeyRoutes from './routes/api-keys';
import eventEndpointRoutes from './routes/event-endpoints';

export interface AppOptions {
  /** Clock used for credit months, filters and stored times; tests inject one. */
  now?: () => Date;
  /** Where pino writes (tests capture logs to check that no secret leaks). */
  logStream?: NodeJS.WritableStream;
  /** Password hashes computed at once and the wait for a slot (tests shrink them). */
  hashSlots?: HashSlots;
  /** Node's process metrics on /metrics (the server turns them on; test apps leave them off). */
  processMetrics?: boolean;
  /** Request-body bytes held in memory at once (64 MB; tests shrink it). */
  bodyBudgetBytes?: number;
  /** The uploads' pace floor and per-user turns (tests shrink the window and watch the turns). */
  uploads?: UploadFairness;
  /** The event feed's timings and bounds (tests shrink the stream heartbeat, the slow-reader bound, delivery clocks). */
  events?: EventsPluginOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    now: () => Date;
    /** JWT_TTL in seconds: the token's lifetime and the cookie's Max-Age. */
    sessionSeconds: number;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The URL with the webhook's verify token masked (any spelling of its key): the one secret a caller puts in a query string. */
function loggedUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  // Split on both separators, keeping them, so `;`-separated queries are masked too.
  const parts = url.slice(at + 1).split(/([&;])/).map((part) => {
    const key = part.split('=', 1)[0]!;
    return part.includes('=') && decodedKey(key).toLowerCase().includes('verify_token') ? `${key}=[redacted]` : part;
  });
  return `${url.slice(0, at + 1)}${parts.join('')}`;
}

function decodedKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

function hopsTrusted(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

function loggerOptions(config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(stream ? { stream } : {}),
    // Secrets never reach the log, whatever a future log call passes in.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.token',
        '*.messaging_token', '*.messagingToken', '*.passwordHash', 'password', 'token', 'messaging_token'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method, url: loggedUrl(request.url), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort,
      }),
    },
  };
}

export async function buildApp(config: Config, options: AppOptions = {}) {
  const app = Fastify({
    logger: loggerOptions(config, options.logStream),
    // A hop count trusts that many proxies nearest to us (Fastify's types lack the number form).
    trustProxy: typeof config.trustProxy === 'number' ? hopsTrusted(config.trustProxy) : config.trustProxy,
    bodyLimit: 100 * 1024,
    // Fastify would take any x-request-id as it is; genReqId keeps a caller's id only when it is short and plain.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: routingError,
    // Made only when the request logs (pino's logger tells whether a level is on; any other gets its child at once).
    childLoggerFactory: (logger, bindings, options) => (typeof (logger as Partial<ParentLogger>).isLevelEnabled === 'function'
      ? new LazyChildLogger(logger as ParentLogger, bindings, options) : logger.child(bindings, options)),
    clientErrorHandler: clientError,
    ...slowClientOptions(config),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('now', options.now ?? (() => new Date()));
  app.decorate('sessionSeconds', durationSeconds(config.jwtTtl));
  // Hooks on every request are callback-style: an async hook costs a promise and a microtask turn per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  await app.register(errorHandler);
  await app.register(slowClients, { budgetBytes: options.bodyBudgetBytes });
  await app.register(validation);
  await app.register(dbPlugin, { path: config.databasePath, tokenKey: config.messagingTokenKey });
  await app.register(passwordsPlugin, options.hashSlots ?? {});
  await app.register(eventsPlugin, options.events ?? {});
  await app.register(authPlugin, { secret: resolveJwtSecret(config.jwtSecret, config.databasePath), ttlSeconds: app.sessionSeconds });
  await app.register(securityHeaders);
  await app.register(openapi);
  await app.register(metricsPlugin, { processMetrics: options.processMetrics ?? false });
  await app.register(messagingPlugin);
  await app.register(webhookInbox);
  await app.register(mediaArchive);
  await app.register(retentionPlugin);
  await app.register(sendSettlement);
  await app.register(pacingPlugin);

  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  await app.register(messageRoutes);
  await app.register(messageQueueRoutes);
  await app.register(oneMessageRoutes);
  await app.register(mediaUploadRoutes, options.uploads ?? {});
  await app.register(webhookRoutes);
  await app.register(webhookEventRoutes);
  await app.register(conversationRoutes);
  await app.register(mediaRoutes);
  await app.register(adminRoutes, { prefix: '/admin' });
  await app.register(inboxRoutes, { prefix: '/inbox' });
  await app.register(authRoutes);
  await app.register(userRoutes);
  await app.register(eventRoutes);
  await app.register(apiKeyRoutes);
  await app.register(eventEndpointRoutes);
  await app.register(consoleApiRoutes);

  return app;
}
export type App = Awaited<ReturnType<typeof buildApp>>;
