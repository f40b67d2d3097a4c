// The HS256 key: JWT_SECRET when given, else one generated once and kept beside the database (0600).
import { randomBytes } from 'node:crypto';
import { secretBesideDatabase } from './secret-file';

export function resolveJwtSecret(configured: string | undefined, databasePath: string): string {
  if (configured) return configured;
  return secretBesideDatabase(databasePath, 'jwt-secret', () => randomBytes(48).toString('base64url'));
}
