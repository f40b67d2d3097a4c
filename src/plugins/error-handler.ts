// Turns every error into the one SPEC §2 shape, with a machine `code`; never leaks internals.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, asStorageError } from '../errors';
import { BASELINE_HEADERS } from './security-headers';

// Fastify's own error codes that are client errors, and the code we answer with.
const FRAMEWORK_CODES: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'UNSUPPORTED_MEDIA_TYPE'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'BAD_REQUEST'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'PAYLOAD_TOO_LARGE'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'INVALID_JSON'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'INVALID_JSON'],
};

type ValidationItem = NonNullable<FastifyError['validation']>[number];

/** "body/to must match pattern …", "body/foo is not allowed" — always naming the field. */
export function validationMessage(context: string | undefined, item: ValidationItem): string {
  const where = `${context ?? 'request'}${item.instancePath ?? ''}`;
  const params = item.params as Record<string, unknown>;
  if (item.keyword === 'additionalProperties') return `${where}/${String(params.additionalProperty)} is not an allowed property`;
  if (item.keyword === 'required') return `${where}/${String(params.missingProperty)} is required`;
  return `${where} ${item.message ?? 'is invalid'}`;
}

export function errorBody(statusCode: number, code: string, message: string) {
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

// Errors Fastify raises while routing, before any hook or the error handler (its `frameworkErrors` option).
const ROUTING_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'The URL is not valid: bad percent-encoding',
  FST_ERR_MAX_PARAM_LENGTH: 'A path segment is longer than 200 characters',
};

/** Node's client errors we answer, by its error code: status, our code, message. Anything else is a 400. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'The request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time'],
};
const RAW_SECURITY_HEADERS = Object.entries(BASELINE_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
/** How long a peer that does not read gets to take the answer before the socket is destroyed anyway. */
const CLOSE_GRACE_MS = 2000;

/**
 * Requests Node cannot parse (a bad header line, headers too large) or that did not fully arrive within
 * REQUEST_TIMEOUT_MS: our shape and a request id, written on the raw socket, which is then closed.
 */
export function clientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A response already under way on this socket: another status line would corrupt it.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'BAD_REQUEST', 'The request could not be parsed'];
  const body = JSON.stringify(errorBody(status, code, message));
  const requestId = randomUUID();
  this.log.info({ reqId: requestId, code: error.code, remoteAddress: socket.remoteAddress }, `client error answered ${status}`);
  // The server keeps sockets half-open: end() alone would leave a client that keeps sending connected.
  const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n`
    + `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n${RAW_SECURITY_HEADERS}`
    + `connection: close\r\n\r\n${body}`, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

/** Fastify's `frameworkErrors`: our shape and the request id, as for every other answer. */
export function routingError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.headers(BASELINE_HEADERS).header('x-request-id', request.id).code(400).send(errorBody(400, 'BAD_REQUEST', ROUTING_MESSAGES[error.code] ?? 'Bad request'));
}

export default fp(async function errorHandler(app: FastifyInstance) {
  app.setErrorHandler((caught: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A storage fault from a write outside the writer (which maps its own) is answered alike: 503 with Retry-After.
    const error = (asStorageError(caught) ?? caught) as FastifyError;
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      return reply.code(error.statusCode).send({ ...errorBody(error.statusCode, error.code, error.message), ...error.extra });
    }
    if (error.validation && error.validation[0]) {
      return reply.code(400).send(errorBody(400, 'VALIDATION_ERROR', validationMessage(error.validationContext, error.validation[0])));
    }
    const known = FRAMEWORK_CODES[error.code];
    if (known) return reply.code(known[0]).send(errorBody(known[0], known[1], error.message));
    if (error.statusCode === 429) {
      // @fastify/rate-limit sets Retry-After itself; keep its status and our shape.
      return reply.code(429).send(errorBody(429, error.code ?? 'TOO_MANY_REQUESTS', error.message));
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(errorBody(error.statusCode, 'BAD_REQUEST', error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'INTERNAL_ERROR', 'Something went wrong; the error is logged with this request id'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody(404, 'ROUTE_NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}, { name: 'error-handler' });
