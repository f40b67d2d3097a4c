// API keys: created, listed, revoked; looked up by the SHA-256 of the presented key (the key itself is never stored).
import { createHash } from 'node:crypto';
import type { DB } from './client';

export interface ApiKeyRow { id: number; userId: number; name: string; last4: string; createdAt: number; lastUsedAt: number | null }

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
const MINUTE = 60_000;

export function createApiKeysRepo(db: DB) {
  const client = db.$client;
  const COLUMNS = 'id, user_id AS userId, name, last4, created_at AS createdAt, last_used_at AS lastUsedAt';
  const count = client.prepare<[number], number>('SELECT count(*) FROM api_keys WHERE user_id = ?').pluck();
  const insert = client.prepare<[number, string, string, string, number], ApiKeyRow>(
    `INSERT INTO api_keys (user_id, name, hash, last4, created_at) VALUES (?, ?, ?, ?, ?) RETURNING ${COLUMNS}`);
  const list = client.prepare<[number], ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE user_id = ? ORDER BY id`);
  const byHash = client.prepare<[string], ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE hash = ?`);
  const byId = client.prepare<[number], ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`);
  const remove = client.prepare<[number, number]>('DELETE FROM api_keys WHERE id = ? AND user_id = ?');
  const used = client.prepare<[number, number]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?');

  return {
    /** A new key row unless the user already holds `max` (null then). Call inside a write. */
    create(userId: number, name: string, key: string, now: number, max: number): ApiKeyRow | null {
      if (count.get(userId)! >= max) return null;
      return insert.get(userId, name, hashKey(key), key.slice(-4), now)!;
    },
    list: (userId: number): ApiKeyRow[] => list.all(userId),
    /** The key row of a presented key; undefined when unknown or revoked. */
    find: (key: string): ApiKeyRow | undefined => byHash.get(hashKey(key)),
    exists: (id: number): boolean => byId.get(id) !== undefined,
    /** Revokes one of the user's keys; false when it is not theirs or already gone. Call inside a write. */
    revoke: (userId: number, id: number): boolean => remove.run(id, userId).changes > 0,
    /** Records use to the minute. Call inside a write. */
    touch: (id: number, now: number): void => void used.run(Math.floor(now / MINUTE) * MINUTE, id),
  };
}
export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
