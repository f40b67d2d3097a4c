// Read side of usage: a user's sends in a time range by outcome, by network error code and by pricing category,
// and the last activity of users (their newest conversation message).
import type { DB } from './client';

export interface SendCounts { byStatus: Record<string, number>; byErrorCode: { code: string; count: number }[] }
export interface PricingCount { category: string; count: number }

export function createUsageRepo(db: DB) {
  const client = db.$client;
  // user_id leads the (user_id, wamid) index: only this user's messages are read.
  const byStatus = client.prepare<[number, number, number], { status: string; n: number }>(`SELECT status, count(*) AS n FROM messages
    WHERE user_id = ? AND direction = 'outbound' AND created_at >= ? AND created_at < ? GROUP BY status`);
  const byErrorCode = client.prepare<[number, number, number], { code: string; n: number }>(`SELECT
    CAST(json_extract(error_json, '$.code') AS TEXT) AS code, count(*) AS n FROM messages
    WHERE user_id = ? AND direction = 'outbound' AND status = 'failed' AND created_at >= ? AND created_at < ? AND json_valid(error_json)
    GROUP BY 1 HAVING code IS NOT NULL ORDER BY n DESC, code`);
  const holdings = client.prepare<[number, number, number, number], { conversations: number; messages: number; media: number; callbacks: number }>(`SELECT
    (SELECT count(*) FROM conversations WHERE user_id = ?) AS conversations, (SELECT count(*) FROM messages WHERE user_id = ?) AS messages,
    (SELECT count(*) FROM media_downloads JOIN messages ON messages.id = media_downloads.message_id
      WHERE messages.user_id = ? AND media_downloads.state = 'stored') AS media,
    (SELECT count(*) FROM webhook_events WHERE user_id = ?) AS callbacks`);
  const lastActivity = client.prepare<[number], number | null>(
    'SELECT max(last_message_at) FROM conversations WHERE user_id = ?').pluck();

  // The network's pricing object of each message (from its first status that carried one).
  const pricing = client.prepare<[number, number, number], { category: string; n: number }>(`SELECT
    coalesce(json_extract(pricing_json, '$.category'), 'unknown') AS category, count(*) AS n FROM messages
    WHERE user_id = ? AND direction = 'outbound' AND status IN ('delivered', 'read') AND created_at >= ? AND created_at < ?
      AND json_valid(pricing_json) GROUP BY 1 ORDER BY n DESC, category`);

  return {
    /** Outbound messages created in [from, to) by status, and the failed ones by the network's error code. */
    sends(userId: number, from: number, to: number): SendCounts {
      return {
        byStatus: Object.fromEntries(byStatus.all(userId, from, to).map((row) => [row.status, row.n])),
        byErrorCode: byErrorCode.all(userId, from, to).map((row) => ({ code: row.code, count: row.n })),
      };
    },
    /** Delivered (or read) outbound messages created in [from, to) by the network's pricing category. */
    pricingCategories(userId: number, from: number, to: number): PricingCount[] {
      return pricing.all(userId, from, to).map((row) => ({ category: String(row.category), count: row.n }));
    },
    /** What deleting the user takes with it (the rows that cascade, and the archived media files). */
    holdings: (userId: number) => holdings.get(userId, userId, userId, userId)!,
    /** The time of the user's newest message (ms), null when it has none. */
    lastActivity: (userId: number): number | null => lastActivity.get(userId) ?? null,
  };
}
export type UsageRepo = ReturnType<typeof createUsageRepo>;
