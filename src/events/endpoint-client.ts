// POSTs deliveries to event endpoints: an undici agent whose connector resolves and checks every address (see
// endpoint-address.ts), no redirects followed, everything within the timeout, answers read up to 4 KB.
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { AddressPolicy } from './endpoint-address';

export type PostResult =
  | { kind: 'answered'; status: number; retryAfterMs: number | undefined; durationMs: number; excerpt: string }
  | { kind: 'failed'; error: string; durationMs: number };

const ANSWER_BYTES = 4096;

/** Retry-After as seconds or an HTTP date -> milliseconds from `now`. */
export function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^[0-9]{1,9}$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function createEndpointClient(options: { policy: AddressPolicy; timeoutMs: number; now: () => number }) {
  const agent = new Agent({
    connect: { lookup: options.policy.lookup, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, connections: 4, keepAliveTimeout: 10_000,
  });

  async function post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const duration = () => Math.round(performance.now() - started);
    try {
      // A literal address never reaches the connector's lookup: it is checked here.
      const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
      if (isIP(host) !== 0) await options.policy.allowedAddresses(host);
      const answer = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal: AbortSignal.timeout(options.timeoutMs) });
      let excerpt = '';
      for await (const chunk of answer.body) {
        excerpt += (chunk as Buffer).toString('utf8');
        if (excerpt.length >= ANSWER_BYTES) break;
      }
      return {
        kind: 'answered', status: answer.statusCode, retryAfterMs: retryAfterMs(answer.headers['retry-after'], options.now()),
        durationMs: duration(), excerpt: excerpt.slice(0, ANSWER_BYTES),
      };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      const message = error instanceof Error ? (cause instanceof Error ? cause.message : error.message) : String(error);
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || /timeout/i.test(error.name + message));
      return { kind: 'failed', error: timedOut ? 'timeout' : message.slice(0, 300), durationMs: duration() };
    }
  }

  return { post, close: () => agent.close() };
}
export type EndpointClient = ReturnType<typeof createEndpointClient>;
