// The HS256 key: JWT_SECRET when given, else one generated once and kept beside the database (0600).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function resolveJwtSecret(configured: string | undefined, databasePath: string): string {
  if (configured) return configured;
  // An in-memory database lives as long as the process: so does its key.
  if (databasePath === ':memory:') return randomBytes(48).toString('base64url');
  const file = join(dirname(databasePath), 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(48).toString('base64url');
  // 'wx': never overwrite a key another process wrote meanwhile.
  try {
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  } catch {
    return readFileSync(file, 'utf8').trim();
  }
  return secret;
}
