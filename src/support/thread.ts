// Starting a worker thread from its module, built or not.
import { dirname, extname, join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The thread running module `name`, which sits beside `besideFile` (a caller's __filename): built, the .js; from the
 * TypeScript sources (tests, development) compiled by tsx's CommonJS hook, loaded by a CommonJS stub: a parent's
 * loader hooks do not reach worker threads.
 */
export function startThread(besideFile: string, name: string, options: WorkerOptions): Worker {
  const entry = join(dirname(besideFile), `${name}${extname(besideFile)}`);
  return extname(entry) === '.ts'
    ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(entry)});`, { ...options, eval: true })
    : new Worker(entry, options);
}
