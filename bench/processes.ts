// Starting and stopping the servers under test as child processes, each on its own free port.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

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
  const deadline = Date.now() + 30_000;
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
