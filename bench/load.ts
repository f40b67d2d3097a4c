// One autocannon run against a server, and the statistics the benchmark prints (medians, min–max).
import { Agent, get } from 'node:http';
import autocannon from 'autocannon';
import { signBody } from '../src/webhooks/signature';

export interface Target { url: string; path: string; headers?: Record<string, string> }
export interface Load { method: 'GET' | 'POST'; connections: number; seconds: number; body?: () => string; signWith?: string }
export interface Result { rps: number; p50: number; p99: number; errors: number }

/** Runs `load` against `target`; each request takes the next body, signed when asked. */
export async function run(target: Target, load: Load): Promise<Result> {
  const result = await autocannon({
    url: target.url + target.path, method: load.method, connections: load.connections, duration: load.seconds,
    headers: { 'content-type': 'application/json', ...target.headers },
    requests: [{
      setupRequest: (request) => {
        if (!load.body) return request;
        const body = load.body();
        const headers = { ...request.headers };
        if (load.signWith) headers['x-hub-signature-256'] = signBody(body, load.signWith);
        return { ...request, body, headers };
      },
    }],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

/** One GET over a keep-alive connection: the time to the last byte, and the status. */
function timedGet(url: URL, headers: Record<string, string> | undefined, agent: Agent): Promise<{ ms: number; ok: boolean }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    get(url, { agent, headers }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => resolve({ ms: performance.now() - start, ok: (response.statusCode ?? 0) < 300 }));
    }).on('error', reject);
  });
}

/**
 * Sequential GETs for `seconds` (one client, no overlap): p50 and p99 in ms, measured here with sub-ms precision.
 * node:http on one keep-alive connection, a client as lean as autocannon's (fetch adds about 0.7 ms to a 200 KB answer).
 */
export async function sequential(target: Target, seconds: number): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(target.url + target.path);
  const times: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  try {
    while (performance.now() < end) {
      const { ms, ok } = await timedGet(url, target.headers, agent);
      times.push(ms);
      if (!ok) errors += 1;
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.floor(p * (times.length - 1))]!;
  return { rps: times.length / seconds, p50: at(0.5), p99: at(0.99), errors };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `median (min–max)` with `digits` decimals. */
export function spread(values: number[], digits: number): string {
  const f = (n: number) => n.toFixed(digits);
  return values.length === 1 ? f(values[0]!) : `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
}
