// A user's event log: pull (with long poll) and the live stream (server-sent events) — the user itself or an ADMIN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, IdParams } from '../../schemas/common';
import { EventsPage, EventsQuery, StreamQuery } from '../../schemas/events';
import { AppError } from '../errors';
import { checkUserScope } from '../events/access';
import { eventJson } from '../views/event-json';

const security: { [name: string]: string[] }[] = [{ bearer: [] }, { cookie: [] }];

const events: FastifyPluginAsyncTypebox = async (app) => {
  /** 410 when events after `after` were already swept by retention. */
  function checkCursor(userId: number, after: number): void {
    const oldest = app.eventsRepo.oldestSeq(userId);
    const last = app.eventsRepo.lastSeq(userId);
    const oldestAvailable = oldest ?? last + 1;
    if (after < oldestAvailable - 1) {
      throw new AppError(410, 'EVENTS_CURSOR_EXPIRED', `Events after ${after} are no longer kept; re-read the conversations, then continue after ${oldestAvailable - 1}`,
        { oldest_available: oldestAvailable });
    }
  }

  app.get('/api/user/:id/events', {
    preValidation: app.authenticate,
    schema: {
      tags: ['events'], operationId: 'listEvents', summary: "Read a user's events after a cursor",
      description: 'Events with `id > after`, oldest first. With `wait`, an empty answer waits up to that many seconds for the next event '
        + '(long poll). 410 `EVENTS_CURSOR_EXPIRED` with `oldest_available` when events after `after` are no longer kept.',
      security, params: IdParams, querystring: EventsQuery,
      response: { 200: EventsPage, ...errors(400, 401, 403, 404, 410) },
    },
    // Events are JSON text rendered once (the message as stored for listings): the schema documents the answer.
    serializerCompiler: () => (data) => (typeof data === 'string' ? data : JSON.stringify(data)),
  }, async (request, reply) => {
    const user = checkUserScope(request.currentUser!, request.params.id, app.usersRepo.findById);
    const { after, limit, wait } = request.query;
    const types = request.query.types?.split(',');
    checkCursor(user.id, after);
    const read = () => app.eventsRepo.after(user.id, after, limit + 1, types);
    let rows = read();
    if (rows.length === 0 && wait !== undefined) {
      // Listening before reading again: an event committed in between still wakes us.
      const gone = new AbortController();
      // The response's close before it is sent: the client went away.
      reply.raw.once('close', () => gone.abort());
      for (const deadline = Date.now() + wait * 1000; rows.length === 0 && !gone.signal.aborted && Date.now() < deadline;) {
        const woken = app.eventNotifier.wait(user.id, deadline - Date.now(), gone.signal);
        rows = read();
        if (rows.length > 0) {
          gone.abort();
          break;
        }
        if (!(await woken)) break;
        rows = read();
      }
    }
    const page = rows.slice(0, limit);
    const nextAfter = page.at(-1)?.seq ?? after;
    return reply.type('application/json; charset=utf-8')
      .send(`{"events":[${page.map(eventJson).join(",")}],"next_after":${nextAfter},"has_more":${rows.length > limit}}` as never);
  });

  app.get('/api/user/:id/events/stream', {
    preValidation: app.authenticate,
    schema: {
      tags: ['events'], operationId: 'streamEvents', summary: "Follow a user's events live (server-sent events)",
      description: 'text/event-stream: each event as `id`, `event` (its type) and `data` (the Event JSON). Resumes after `Last-Event-ID` '
        + '(or `after`) with no gap and no duplicate; a comment line every 15 s. At most 5 streams per user by default, `EVENT_STREAMS_PER_USER` (429 `TOO_MANY_STREAMS`). '
        + 'A client that does not read is disconnected (resume by id); the stream ends when its session or key is revoked or the user disabled.',
      security, params: IdParams, querystring: StreamQuery,
      headers: { type: 'object', properties: { 'last-event-id': { type: 'string', pattern: '^[0-9]{1,15}$', description: 'Resume after this id' } } },
      response: { 200: { type: 'string', description: 'text/event-stream' }, ...errors(400, 401, 403, 404, 410, 429) },
    },
  }, async (request, reply) => {
    const caller = request.currentUser!;
    const user = checkUserScope(caller, request.params.id, app.usersRepo.findById);
    const lastEventId = request.headers['last-event-id'];
    const after = typeof lastEventId === 'string' ? Number(lastEventId) : request.query.after ?? app.eventsRepo.lastSeq(user.id);
    checkCursor(user.id, after);
    const claims = request.apiKeyId === null ? app.sessionClaims(request) : undefined;
    const raw = reply.raw;
    const credential = request.apiKeyId !== null ? { callerId: caller.id, keyId: request.apiKeyId }
      : { callerId: caller.id, jti: claims?.jti, ver: claims?.ver };
    const opened = app.eventStreams.open(user.id, after, request.query.types?.split(','), credential, {
      write: (chunk) => raw.write(chunk),
      buffered: () => raw.writableLength,
      onDrain: (listener) => raw.once('drain', listener).once('close', listener),
      close: (reason) => (reason === 'slow' ? raw.destroy() : raw.end()),
    });
    if (opened === false) throw new AppError(429, 'TOO_MANY_STREAMS', `This user already has ${app.config.eventStreamsPerUser} open event streams; close one first`);
    reply.hijack();
    raw.writeHead(200, {
      ...reply.getHeaders(),
      'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', connection: 'keep-alive',
    } as Record<string, string>);
    raw.write('retry: 2000\n\n');
    raw.once('close', opened);
  });
};
export default events;
