// A local event-endpoint receiver for the benchmark, a process of its own: answers every POST 200 at once and counts
// the events in each batch (`{"events":[{"id":N,"type":…`) without parsing or verifying anything heavy.
// GET /count → {events, posts, maxId, firstAt, lastAt} (ms, this process's Date.now()); POST /reset zeroes it.
import { createServer } from 'node:http';

const EVENT = /\{"id":(\d+),"type":"/g;
let state = { events: 0, posts: 0, maxId: 0, firstAt: 0, lastAt: 0 };

const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state));
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url === '/reset') {
      state = { events: 0, posts: 0, maxId: 0, firstAt: 0, lastAt: 0 };
    } else {
      const body = Buffer.concat(chunks).toString('utf8');
      const now = Date.now();
      for (const match of body.matchAll(EVENT)) {
        state.events += 1;
        state.maxId = Math.max(state.maxId, Number(match[1]));
      }
      state.posts += 1;
      if (state.firstAt === 0) state.firstAt = now;
      state.lastAt = now;
    }
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
