// The audit entries of a change to a user: what changed, told field by field, never a value of a secret.
import type { AuditRepo } from '../db/audit-repo';
import type { UserRow } from '../db/tables';
import { recordAudit, type AuditActor } from './audit';

/** The fields told with their old and new values (none of them is a secret). */
const TOLD = { email: 'email', role: 'role', ssoId: 'sso_id', messagingPhoneNumberId: 'messaging_phone_number_id' } as const;

const targetOf = (user: UserRow) => ({ id: user.id, email: user.email });

/** Records the creation of `user` (inside its write). */
export function auditUserCreated(repo: AuditRepo, actor: AuditActor, user: UserRow, at: Date): void {
  recordAudit(repo, {
    actor, action: 'user.created', target: targetOf(user), at,
    details: {
      role: user.role, is_active: user.isActive, monthly_credits: user.monthlyCredits,
      messaging_phone_number_id: user.messagingPhoneNumberId, messaging_token_set: user.messagingToken !== null,
    },
  });
}

/**
 * Records what an update changed, comparing the row before and after (inside the update's write): disabled or enabled,
 * credits changed, token replaced or removed, password changed, and the other fields in one `user.updated`.
 * `given` is the set of API fields the request carried (a token or password is told as given, never compared).
 */
export function auditUserUpdated(repo: AuditRepo, actor: AuditActor, before: UserRow, after: UserRow, given: readonly string[], at: Date): void {
  const target = targetOf(after);
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [column, field] of Object.entries(TOLD) as [keyof typeof TOLD, string][]) {
    if (before[column] !== after[column]) changes[field] = { from: before[column], to: after[column] };
  }
  if (Object.keys(changes).length > 0) {
    recordAudit(repo, { actor, action: 'user.updated', target, at, details: { fields: Object.keys(changes), changes } });
  }
  if (before.isActive !== after.isActive) recordAudit(repo, { actor, action: after.isActive ? 'user.enabled' : 'user.disabled', target, at });
  if (before.monthlyCredits !== after.monthlyCredits) {
    recordAudit(repo, { actor, action: 'user.credits_changed', target, at, details: { from: before.monthlyCredits, to: after.monthlyCredits } });
  }
  if (given.includes('messaging_token')) {
    recordAudit(repo, { actor, action: after.messagingToken === null ? 'user.token_removed' : 'user.token_replaced', target, at });
  }
  if (given.includes('password')) recordAudit(repo, { actor, action: 'user.password_changed', target, at, details: { sessions_ended: true } });
}
