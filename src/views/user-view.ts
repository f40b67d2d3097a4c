// The user object of the API (SPEC §4): only whitelisted fields, with this month's credit usage and the token's last 4.
import type { User } from '../../schemas/users';
import type { CreditsRepo } from '../db/credits-repo';
import type { UserRow } from '../db/tables';
import { monthKey } from '../support/time';

/** Tokens shorter than this show no last characters: 4 of a short token give too much of it away. */
const LAST4_MIN_LENGTH = 12;

/** The last 4 characters of an opened token, or null (none, too short, unreadable). */
export const tokenLast4 = (token: string | undefined | null): string | null =>
  token && token.length >= LAST4_MIN_LENGTH ? token.slice(-4) : null;

export function publicUser(user: UserRow, creditsUsed: number, last4: string | null = null): User {
  return {
    id: user.id,
    email: user.email,
    sso_id: user.ssoId,
    role: user.role,
    is_active: user.isActive,
    messaging_phone_number_id: user.messagingPhoneNumberId,
    messaging_token_set: user.messagingToken !== null,
    messaging_token_last4: last4,
    monthly_credits: user.monthlyCredits,
    messaging_rate: user.messagingRate,
    credits_used: creditsUsed,
    credits_remaining: Math.max(0, user.monthlyCredits - creditsUsed),
    created_at: new Date(user.createdAt).toISOString(),
    updated_at: new Date(user.updatedAt).toISOString(),
  };
}

/** What reading the current month's usage needs; the Fastify instance provides all of it. */
export interface CreditClock {
  creditsRepo: CreditsRepo; now: () => Date; config: { timezone: string };
  /** Opens a sealed token (only its last 4 characters leave this module). */
  openMessagingToken: (sealed: string, userId: number) => string | undefined;
}

/** `publicUser` with the usage of the current calendar month in the configured zone. */
export function publicUserNow(user: UserRow, deps: CreditClock): User {
  const last4 = user.messagingToken === null ? null : tokenLast4(deps.openMessagingToken(user.messagingToken, user.id));
  return publicUser(user, deps.creditsRepo.used(user.id, monthKey(deps.now(), deps.config.timezone)), last4);
}
