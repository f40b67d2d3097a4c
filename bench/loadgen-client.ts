// The benchmark's side of the load generator: forks loadgen.js once and sends it one job at a time.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Answer, Job } from './loadgen';

export interface LoadGenerator { ask: (job: Job) => Promise<Answer>; close: () => void }

export function startLoadGenerator(): LoadGenerator {
  const child: ChildProcess = fork(join(__dirname, 'loadgen.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (answer: Answer) => void>();
  let nextId = 0;
  child.on('message', (answer: Answer) => {
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  return {
    ask: (job) => new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (answer) => (answer.error ? reject(new Error(answer.error)) : resolve(answer)));
      child.send({ id, job });
    }),
    close: () => child.disconnect(),
  };
}
