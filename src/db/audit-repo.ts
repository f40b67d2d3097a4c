// The audit log: one row per administrative change, appended inside the change's own write; read newest first.
import type { DB } from './client';

export interface AuditEntry {
  at: number;
  actorUserId: number | null;
  actorEmail: string | null;
  action: string;
  targetUserId: number | null;
  targetEmail: string | null;
  detailsJson: string;
  clientIp: string | null;
}
export interface AuditRow extends AuditEntry { id: number }

const COLUMNS = `id, at, actor_user_id AS actorUserId, actor_email AS actorEmail, action, target_user_id AS targetUserId,
  target_email AS targetEmail, details_json AS detailsJson, client_ip AS clientIp`;

export function createAuditRepo(db: DB) {
  const client = db.$client;
  const insert = client.prepare<AuditEntry>(`INSERT INTO audit_log (at, actor_user_id, actor_email, action, target_user_id, target_email,
    details_json, client_ip) VALUES (@at, @actorUserId, @actorEmail, @action, @targetUserId, @targetEmail, @detailsJson, @clientIp)`);
  const page = client.prepare<[number, number], AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?`);
  const ofTarget = client.prepare<[number, number], AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE target_user_id = ?
    ORDER BY id DESC LIMIT ?`);

  return {
    /** Appends one entry (call inside a write body, beside the change it records); its id. */
    append: (entry: AuditEntry): number => Number(insert.run(entry).lastInsertRowid),
    /** Entries with an id below `beforeId`, newest first. */
    page: (beforeId: number | undefined, limit: number): AuditRow[] => page.all(beforeId ?? Number.MAX_SAFE_INTEGER, limit),
    /** The latest entries about one user. */
    ofTarget: (userId: number, limit: number): AuditRow[] => ofTarget.all(userId, limit),
  };
}
export type AuditRepo = ReturnType<typeof createAuditRepo>;
