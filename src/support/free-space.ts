// Free space of the filesystem that holds a path, in bytes (what an unprivileged process may still write).
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';

/** Bytes available to this process on `path`'s filesystem; `Infinity` for `:memory:` or when it cannot be read. */
export function freeBytes(path: string): number {
  if (path === ':memory:') return Infinity;
  try {
    const stats = statfsSync(dirname(path));
    return stats.bavail * stats.bsize;
  } catch {
    return Infinity;
  }
}
