// The demo's own folder (`data/demo/`: its database, jwt-secret, token-key and media archive), emptied at each start,
// and its configuration: nothing of a real gateway started from the same project folder is read, shared or deleted.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config';

/** The folder the demo owns inside the project: everything it writes lives there. */
export const demoFolder = (projectRoot: string): string => join(projectRoot, 'data', 'demo');

/** Empties the demo's folder (a fresh demo each run); nothing outside it is touched. Returns the database path. */
export function freshDemoFolder(projectRoot: string): string {
  const dir = demoFolder(projectRoot);
  rmSync(dir, { recursive: true, force: true });
  return join(dir, 'demo.db');
}

/**
 * The gateway's configuration for the demo: the operator's settings, but its own database and keys. JWT_SECRET and
 * MESSAGING_TOKEN_KEY are dropped so the demo generates its own beside its database: a session the demo issues is
 * never valid on the real gateway, and the demo never reads the real one's messaging tokens.
 */
export function demoConfig(base: Config, databasePath: string, overrides: Partial<Config>): Config {
  return { ...base, host: '127.0.0.1', databasePath, jwtSecret: undefined, messagingTokenKey: undefined, ...overrides };
}
