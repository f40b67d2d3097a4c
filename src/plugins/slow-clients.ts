// Bounds what slow or bulky clients can hold: a deadline for receiving each request, and a budget of body bytes in memory.
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config';
import { AppError } from '../errors';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route streams its body on as it arrives (never holding it whole): exempt from the body budget. */
    streamsBody?: boolean;
  }
}

/** How often Node looks for requests past their deadline (its default, 30 s, would let one live up to twice as long). */
const DEADLINE_CHECK_MS = 1000;
/** Request-body bytes held at once, over all requests: ~20 webhook bodies at their 3 MB limit. */
export const BODY_BUDGET_BYTES = 64 * 1024 * 1024;
/** Bodies up to this declared size are counted from their headers on (4,096 silent sockets to fill the budget). */
const COUNTED_WHOLE_BYTES = 16 * 1024;

/**
 * Fastify server options: a request whose headers and body have not all arrived within REQUEST_TIMEOUT_MS is answered
 * 408 (by clientError) and closed. Fastify copies only `requestTimeout` onto the server; the rest goes through `http`.
 */
export function slowClientOptions(config: Config) {
  const timeout = config.requestTimeoutMs;
  return {
    requestTimeout: timeout,
    http: { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: DEADLINE_CHECK_MS },
  };
}

const busy = () => new AppError(503, 'BUSY', 'Too many large requests are being received at once; retry shortly',
  undefined, { 'retry-after': '5' });

/**
 * The deadline bounds how long a body is held, not how many are: many clients each sending most of a large body would
 * still fill the memory. Bytes count from arrival (a small body's declared length: from its headers) until the answer
 * is sent; a request that would overdraw gets 503.
 */
export default fp(async function slowClients(app: FastifyInstance, options: { budgetBytes?: number }) {
  const budget = options.budgetBytes ?? BODY_BUDGET_BYTES;
  let held = 0;
  const budgeted = (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload): RequestPayload => {
    const { headers, method } = request;
    const noBody = headers['transfer-encoding'] === undefined && (headers['content-length'] ?? '0') === '0';
    if (method === 'GET' || method === 'HEAD' || noBody) return payload;
    // Fastify builds routeOptions afresh at each read: once per request.
    const route = request.routeOptions;
    // A route that streams its body on (config.streamsBody: media uploads) holds no more than a chunk: nothing to count,
    // and a second reader of the raw request here would stall it.
    if (route.config?.streamsBody) return payload;
    // A small body with a declared length (callbacks, sends: nearly every request) is counted whole when its headers
    // arrive: a counting stream per request cost more CPU than the rest of this hook. A length over the route's limit is
    // left to Fastify's 413.
    const declared = headers['transfer-encoding'] === undefined ? Number(headers['content-length']) : Number.NaN;
    if (declared <= COUNTED_WHOLE_BYTES && declared <= route.bodyLimit) {
      if (held + declared > budget) {
        request.log.warn({ held, budget }, 'request-body budget exhausted: answering 503');
        throw busy();
      }
      held += declared;
      reply.raw.once('close', () => { held -= declared; });
      return payload;
    }
    let mine = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (held + chunk.length > budget) {
          request.log.warn({ held, budget }, 'request-body budget exhausted: answering 503');
          done(busy());
          return;
        }
        held += chunk.length;
        mine += chunk.length;
        done(null, chunk);
      },
    });
    payload.on('error', (error) => counted.destroy(error));
    reply.raw.once('close', () => {
      held -= mine;
      mine = 0;
      if (request.raw.complete) return;
      // Answered before the body arrived (503, 415): drop the rest as Node does for a body nobody reads (the pipe
      // stops Node from doing it). The deadline still ends a body that never finishes.
      payload.unpipe(counted);
      counted.destroy();
      payload.resume();
    });
    return payload.pipe(counted);
  };
  // Callback-style: it runs on every request, and an async hook costs a promise and a microtask turn.
  app.addHook('preParsing', (request, reply, payload, done) => {
    try {
      done(null, budgeted(request, reply, payload));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}, { name: 'slow-clients' });
