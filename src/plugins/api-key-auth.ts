// The API-key path of authentication: `Authorization: Bearer gwk_…` on /api routes only (never the HTML pages), the
// key's user re-read every request (disabled → 403, deleted or key revoked → 401), last use recorded to the minute.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { accountDisabled, unauthorized } from '../errors';

export const API_KEY_PREFIX = 'gwk_';
export const isApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);
const MINUTE = 60_000;

export async function authenticateKey(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  const header = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  // Only in the Authorization header, and only for the JSON API.
  if (header === undefined || !isApiKey(header) || !request.url.startsWith('/api/')) {
    throw unauthorized('API keys are accepted only as `Authorization: Bearer gwk_…` on /api routes');
  }
  const key = app.apiKeysRepo.find(header);
  if (!key) throw unauthorized('API key is unknown or revoked');
  const user = app.usersRepo.findById(key.userId);
  if (!user) throw unauthorized('API key is unknown or revoked');
  if (!user.isActive) throw accountDisabled();
  request.currentUser = user;
  request.apiKeyId = key.id;
  const now = app.now().getTime();
  if (key.lastUsedAt === null || now - key.lastUsedAt >= MINUTE) {
    // Best effort: a failed note of use must not refuse the request.
    app.writer.write(() => app.apiKeysRepo.touch(key.id, now)).catch(() => undefined);
  }
}
