// Test helpers: the real app on a fresh SQLite file in a temp dir, users, and tokens.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buildApp, type App, type AppOptions } from '../src/app';
import { parseConfig, type Config } from '../src/config';
import type { UserRow } from '../src/db/tables';
import type { NewUser } from '../src/db/users-repo';
import { hashPassword } from '../src/services/passwords';

interface Teardown { teardown(fn: () => unknown): void }

export function tempDir(t: Teardown, prefix = 'gateway-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Config as the process would parse it, on a temp database, with test overrides. */
export function testConfig(dir: string, overrides: Partial<Config> = {}): Config {
  return {
    ...parseConfig({ DATABASE_PATH: join(dir, 'gateway.db'), LOG_LEVEL: 'silent', JWT_SECRET: 'test-secret-test-secret-test-secret-0123' }),
    ...overrides,
  };
}

export interface TestApp { app: App; config: Config; dir: string; logs: () => string }

/** The real app on a fresh database file; closed when the test ends. Logs are captured in memory. */
export async function buildTestApp(t: Teardown, overrides: Partial<Config> = {}, options: AppOptions = {}): Promise<TestApp> {
  const dir = tempDir(t);
  const config = testConfig(dir, { logLevel: 'info', ...overrides });
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  const app = await buildApp(config, { logStream: stream, ...options });
  t.teardown(() => app.close());
  return { app, config, dir, logs: () => chunks.join('') };
}

export const PASSWORD = 'correct horse battery';

/** Inserts a user through the repository (password `PASSWORD` unless given). */
export async function createUser(app: App, fields: Partial<NewUser> & { email: string; password?: string }): Promise<UserRow> {
  const { password, ...rest } = fields;
  const result = app.usersRepo.create({ passwordHash: await hashPassword(password ?? PASSWORD), ...rest }, app.now());
  if (!result.ok) throw new Error('createUser: ' + result.conflict + ' taken');
  return result.user;
}

export const createAdmin = (app: App, email = 'admin@example.com') => createUser(app, { email, role: 'ADMIN' });

/** `Authorization` header carrying a fresh session JWT for `user`. */
export function bearer(app: App, user: UserRow): { authorization: string } {
  return { authorization: `Bearer ${app.issueToken(user)}` };
}
