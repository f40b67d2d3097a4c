// Starting and stopping the servers under test as child processes, each on its own free port; their CPU time and memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * The node flags a build's `npm start` runs its gateway with (those between `node` and the server in its package.json's
 * start script, such as a heap limit), from the path of its `dist/src/server.js`: the bench runs each build as its
 * operators do.
 */
export function gatewayNodeFlags(server: string): string[] {
  const start = (JSON.parse(readFileSync(join(server, '..', '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  return /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/src\/server\.js/.exec(start)?.[1]?.trim().split(' ').filter(Boolean) ?? [];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface Running { url: string; pid: number; stop: () => Promise<void> }

/** Runs `node script` with `env` and waits until GET `readyPath` answers. */
export async function startServer(script: string, env: Record<string, string>, readyPath = '/healthz', nodeFlags: string[] = []): Promise<Running> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, script], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  // An older database is upgraded and its listed JSON rendered before the server listens: that takes a while.
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url + readyPath)).ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: () => new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux (`getconf CLK_TCK`)

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat (Linux). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of the process's main thread alone, its event loop (its task id is the process id): what caps the
 * requests a Node server answers per second, when the work of its other threads (disk syncs, checkpoints, the
 * listings) runs on another core.
 */
export function loopCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds once the process is idle (no tick used in 200 ms, at most 5 s): work a server does after its answers
 * (a callback's processing) counts for the run that caused it, and not for the next one.
 */
export async function settledCpuSeconds(pid: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  let last = cpuSeconds(pid);
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = cpuSeconds(pid);
    if (now - last < 0.5 / TICKS_PER_SECOND || Date.now() > deadline) return now;
    last = now;
  }
}

/** Peak resident set size of a process in MB, from the kernel's high-water mark (Linux). */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}
