// The load generator's HTTP/1.1 client on raw sockets: keep-alive, a fixed number of requests in flight per
// connection (pipelining), responses framed by content-length. A few µs per request, so it never limits a server.
import { connect, type Socket } from 'node:net';

export interface Request { method: string; path: string; headers: Record<string, string>; body?: Buffer }
export interface Outcome { count: number; errors: number; statuses: Record<string, number>; seconds: number; latencies: Float64Array }

export interface Plan {
  host: string; port: number; connections: number; pipelining: number; seconds: number;
  next: () => Request;
  /** The status that counts as success (default: any 2xx). */
  expect?: number;
  /** Stop issuing new requests when this resolves as well (used to stop /healthz probes with their neighbours). */
  stop?: Promise<void>;
}

function encode(request: Request, host: string): Buffer[] {
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(request.headers)) head += `${name}: ${value}\r\n`;
  head += `content-length: ${request.body?.length ?? 0}\r\n\r\n`;
  return request.body ? [Buffer.from(head, 'latin1'), request.body] : [Buffer.from(head, 'latin1')];
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Where a chunked body that starts at `from` ends (after its last chunk and empty trailer), or -1 while incomplete. */
function chunkedEnd(buffer: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const line = buffer.indexOf('\r\n', at);
    if (line === -1) return -1;
    const size = Number.parseInt(buffer.toString('latin1', at, line), 16);
    if (size === 0) {
      const trailer = buffer.indexOf(HEAD_END, line);
      return trailer === -1 ? -1 : trailer + 4;
    }
    at = line + 2 + size + 2;
    if (at > buffer.length) return -1;
  }
}

/** Runs `plan` and answers how many requests completed, their statuses and latencies (ms). */
export function load(plan: Plan): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const deadline = started + plan.seconds * 1000;
    let latencies = new Float64Array(1 << 16);
    let count = 0;
    let errors = 0;
    let stopped = false;
    let open = 0;
    let last = started;
    const statuses: Record<string, number> = {};
    const sockets = new Set<Socket>();
    void plan.stop?.then(() => { stopped = true; });
    // A server that stops answering ends the run 30 s after its time, its open requests counted as errors.
    const hang = setTimeout(() => { stopped = true; for (const socket of sockets) socket.destroy(); }, plan.seconds * 1000 + 30_000);
    const record = (status: number, at: number, sentAt: number) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = at - sentAt;
      last = at;
      statuses[status] = (statuses[status] ?? 0) + 1;
      const ok = plan.expect === undefined ? status >= 200 && status < 300 : status === plan.expect;
      if (!ok) errors += 1;
    };
    const finish = () => {
      if (--open > 0) return;
      clearTimeout(hang);
      resolve({ count, errors, statuses, seconds: (last - started) / 1000, latencies: latencies.subarray(0, count) });
    };

    const connection = () => {
      open += 1;
      const sent: number[] = [];
      // Bytes received and not yet parsed, joined only once they can hold the next answer: joining at every chunk
      // copied a 4 MB answer some 60 times over, and timed this client rather than the server.
      let unparsed: Buffer[] = [];
      let received = 0;
      let needed = 0;
      let closed = false;
      const socket: Socket = connect(plan.port, plan.host);
      sockets.add(socket);
      socket.setNoDelay(true);
      const send = () => {
        if (stopped || closed || performance.now() >= deadline) return;
        const parts = encode(plan.next(), plan.host);
        sent.push(performance.now());
        socket.cork();
        for (const part of parts) socket.write(part);
        socket.uncork();
      };
      const done = () => {
        if (closed) return;
        closed = true;
        errors += sent.length;
        sockets.delete(socket);
        socket.destroy();
        // A connection the server closed is replaced while the run lasts.
        if (!stopped && performance.now() < deadline) connection();
        finish();
      };
      socket.on('connect', () => { for (let i = 0; i < plan.pipelining; i++) send(); });
      socket.on('data', (chunk: Buffer) => {
        unparsed.push(chunk);
        received += chunk.length;
        if (received < needed) return;
        let buffer = unparsed.length === 1 ? chunk : Buffer.concat(unparsed, received);
        unparsed = [];
        received = 0;
        needed = 0;
        for (;;) {
          const end = buffer.indexOf(HEAD_END);
          if (end === -1) break;
          const head = buffer.toString('latin1', 0, end).toLowerCase();
          const lengthAt = head.indexOf('\r\ncontent-length:');
          const bodyEnd = lengthAt !== -1 ? end + 4 + Number.parseInt(head.slice(lengthAt + 17), 10)
            : head.includes('\r\ntransfer-encoding: chunked') ? chunkedEnd(buffer, end + 4) : end + 4;
          if (bodyEnd === -1 || buffer.length < bodyEnd) {
            needed = Math.max(bodyEnd, 0);
            break;
          }
          record(Number(head.slice(9, 12)), performance.now(), sent.shift() ?? started);
          buffer = buffer.subarray(bodyEnd);
          if (sent.length === 0 && (stopped || performance.now() >= deadline)) {
            closed = true;
            sockets.delete(socket);
            socket.end();
            finish();
            return;
          }
          send();
        }
        if (buffer.length > 0) {
          unparsed = [buffer];
          received = buffer.length;
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', done);
    };
    for (let i = 0; i < plan.connections; i++) connection();
  });
}

/** The `p` quantile (0–1) of `values` in ms. */
export function quantile(values: Float64Array, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))]!;
}
