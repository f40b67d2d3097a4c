// An audit row as the API and the audit page show it.
import type { AuditEntry } from '../../schemas/console';
import type { AuditRow } from '../db/audit-repo';
import { isoUtc } from '../support/iso-utc';
import { parseJsonOrUndefined } from '../support/loose-json';

export const auditEntryJson = (row: AuditRow): AuditEntry => {
  const details = parseJsonOrUndefined(row.detailsJson);
  return {
    id: row.id,
    at: isoUtc(row.at),
    actor: { user_id: row.actorUserId, email: row.actorEmail },
    action: row.action,
    target: { user_id: row.targetUserId, email: row.targetEmail },
    details: details !== null && typeof details === 'object' && !Array.isArray(details) ? details as Record<string, unknown> : {},
    client_ip: row.clientIp,
  };
};

/** One line of what changed, for the page: `monthly_credits: 100 → 500`, `fields: email, role`. */
export function detailsText(details: Record<string, unknown>): string {
  const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const changes = details.changes as Record<string, { from: unknown; to: unknown }> | undefined;
  if (changes) return Object.entries(changes).map(([field, c]) => `${field}: ${show(c.from)} → ${show(c.to)}`).join('; ');
  if ('from' in details && 'to' in details) return `${show(details.from)} → ${show(details.to)}`;
  return Object.entries(details).map(([key, value]) => `${key}: ${show(value)}`).join('; ');
}
