// recordAudit: the one way an administrative change is written to the audit log — who, what, on whom, from where.
// Call it inside the write body of the change itself, so the record and the change commit (or roll back) together.
import type { AuditRepo } from '../db/audit-repo';

/** Who acted and from which address (a route takes both from its request). */
export interface AuditActor { id: number | null; email: string | null; ip: string | null }
/** The user a change is about; null for changes about something else (a callback replayed, a key of no user). */
/** The actor of a request: its signed-in user and client address. */
export const actorOf = (user: { id: number; email: string } | null, ip: string): AuditActor =>
  ({ id: user?.id ?? null, email: user?.email ?? null, ip });

export type AuditTarget = { id: number; email: string } | null;

export type AuditAction =
  | 'user.created' | 'user.updated' | 'user.disabled' | 'user.enabled' | 'user.deleted'
  | 'user.token_replaced' | 'user.token_removed' | 'user.credits_changed' | 'user.password_changed' | 'user.password_reset'
  | 'webhook_event.replayed'
  // Reserved for the API keys and event endpoints.
  | 'key.created' | 'key.revoked' | 'endpoint.created' | 'endpoint.changed' | 'endpoint.deleted';

// A detail whose name looks like a secret is never stored, whatever a caller passes (defence in depth: callers name fields, not values).
// `messaging_token` or `api_key` is dropped; `messaging_token_set` or `key_id` (which tell nothing) is kept.
const SECRET_NAME = /password|passwd|secret|hash|authorization|cookie|(^|_)(token|key|jwt)$/i;

/** `details` without any secret-looking key, recursively; arrays of field names are kept (they name, they do not tell). */
export function auditDetails(details: Record<string, unknown>): Record<string, unknown> {
  const clean: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(details)) {
    if (SECRET_NAME.test(name)) continue;
    clean[name] = value !== null && typeof value === 'object' && !Array.isArray(value) ? auditDetails(value as Record<string, unknown>) : value;
  }
  return clean;
}

export function recordAudit(repo: AuditRepo, entry: {
  actor: AuditActor; action: AuditAction; target: AuditTarget; details?: Record<string, unknown>; at: Date;
}): number {
  return repo.append({
    at: entry.at.getTime(),
    actorUserId: entry.actor.id,
    actorEmail: entry.actor.email,
    action: entry.action,
    targetUserId: entry.target?.id ?? null,
    targetEmail: entry.target?.email ?? null,
    detailsJson: JSON.stringify(auditDetails(entry.details ?? {})),
    clientIp: entry.actor.ip,
  });
}
