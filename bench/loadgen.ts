// The load generator, a process of its own (forked by run.ts): it takes one job at a time over IPC, runs it with the
// raw-socket client and answers the counts and latencies. Nothing of the servers under test runs here.
import { makeBody, sign, type BodyData, type BodyKind } from './bodies';
import { load, quantile, type Outcome, type Request } from './http-client';

/** `rotate`: header sets added to `headers` in turn, one per request (e.g. the session cookies of several senders). */
export interface Side { port: number; path: string; method: 'GET' | 'POST'; headers?: Record<string, string>; rotate?: Record<string, string>[] }
export interface LoadJob {
  kind: 'load'; side: Side; body?: BodyKind; signWith?: string; connections: number; pipelining: number; seconds: number; expect?: number;
}
/** `connections` at once post `body` to `side` (none waits for another) while one client times GET `probe`. */
export interface FloodJob { kind: 'flood'; side: Side; body: BodyKind; signWith: string; connections: number; probe: Side; seconds: number; expect: number }
export type Job = { kind: 'setup'; data: BodyData } | LoadJob | FloodJob;
export interface Summary { count: number; errors: number; statuses: Record<string, number>; rps: number; p50: number; p99: number }
export interface Answer { id: number; result?: Summary; probe?: Summary; error?: string }

let data: BodyData | undefined;

function requestOf(side: Side, body: BodyKind | undefined, signWith: string | undefined): () => Request {
  let turn = 0;
  return () => {
    const headers: Record<string, string> = { ...side.headers, ...side.rotate?.[turn++ % side.rotate.length] };
    if (!body) return { method: side.method, path: side.path, headers };
    const bytes = makeBody(body, data!, String(side.port));
    headers['content-type'] = 'application/json';
    // The big body carries a signature of other bytes: wrong, as an attacker's would be.
    if (signWith) headers['x-hub-signature-256'] = body === 'big-unsigned' ? sign(Buffer.from('other'), signWith) : sign(bytes, signWith);
    return { method: side.method, path: side.path, headers, body: bytes };
  };
}

const summary = (outcome: Outcome): Summary => ({
  count: outcome.count, errors: outcome.errors, statuses: outcome.statuses, rps: outcome.count / Math.max(outcome.seconds, 1e-3),
  p50: quantile(outcome.latencies, 0.5), p99: quantile(outcome.latencies, 0.99),
});

async function handle(job: Job): Promise<Omit<Answer, 'id'>> {
  const host = '127.0.0.1';
  switch (job.kind) {
    case 'setup':
      data = job.data;
      return {};
    case 'load':
      return { result: summary(await load({ host, port: job.side.port, connections: job.connections, pipelining: job.pipelining,
        seconds: job.seconds, next: requestOf(job.side, job.body, job.signWith), expect: job.expect })) };
    case 'flood': {
      let end!: () => void;
      const ended = new Promise<void>((resolve) => { end = resolve; });
      const flood = load({ host, port: job.side.port, connections: job.connections, pipelining: 1, seconds: job.seconds,
        next: requestOf(job.side, job.body, job.signWith), expect: job.expect }).finally(end);
      const probe = load({ host, port: job.probe.port, connections: 1, pipelining: 1, seconds: job.seconds + 60,
        next: requestOf(job.probe, undefined, undefined), stop: ended });
      return { result: summary(await flood), probe: summary(await probe) };
    }
  }
}

process.on('message', (message: { id: number; job: Job }) => {
  handle(message.job).then(
    (answer) => process.send!({ id: message.id, ...answer }),
    (error: unknown) => process.send!({ id: message.id, error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
