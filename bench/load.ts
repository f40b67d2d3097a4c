// One autocannon run against a server, and the statistics the benchmark prints (medians, min–max).
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

/** Sequential GETs for `seconds` (one client, no overlap): p50 and p99 in ms, measured here with sub-ms precision. */
export async function sequential(target: Target, seconds: number): Promise<Result> {
  const times: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const start = performance.now();
    const response = await fetch(target.url + target.path, { headers: target.headers });
    await response.arrayBuffer();
    times.push(performance.now() - start);
    if (!response.ok) errors += 1;
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
