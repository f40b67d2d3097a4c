// The user object of the API (SPEC §4): only whitelisted fields, with this month's credit usage.
import type { User } from '../../schemas/users';
import type { CreditsRepo } from '../db/credits-repo';
import type { UserRow } from '../db/tables';
import { monthKey } from '../support/time';

export function publicUser(user: UserRow, creditsUsed: number): User {
  return {
    id: user.id,
    email: user.email,
    sso_id: user.ssoId,
    role: user.role,
    is_active: user.isActive,
    messaging_phone_number_id: user.messagingPhoneNumberId,
    messaging_token_set: user.messagingToken !== null,
    monthly_credits: user.monthlyCredits,
    messaging_rate: user.messagingRate,
    credits_used: creditsUsed,
    credits_remaining: Math.max(0, user.monthlyCredits - creditsUsed),
    created_at: new Date(user.createdAt).toISOString(),
    updated_at: new Date(user.updatedAt).toISOString(),
  };
}

/** What reading the current month's usage needs; the Fastify instance provides all of it. */
export interface CreditClock { creditsRepo: CreditsRepo; now: () => Date; config: { timezone: string } }

/** `publicUser` with the usage of the current calendar month in the configured zone. */
export function publicUserNow(user: UserRow, deps: CreditClock): User {
  return publicUser(user, deps.creditsRepo.used(user.id, monthKey(deps.now(), deps.config.timezone)));
}
