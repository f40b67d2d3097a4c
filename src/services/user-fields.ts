// API user fields <-> database columns: a given password becomes its argon2id hash, a taken unique column its 409.
import type { CreateUserBody, UpdateUserBody } from '../../schemas/users';
import type { UserRow } from '../db/tables';
import type { NewUser, UserChanges, WriteResult } from '../db/users-repo';
import { AppError, lastAdmin } from '../errors';
import type { PasswordHasher } from './passwords';

type Hash = PasswordHasher['hash'];

/** `hash` is the app's bounded hasher: creating and updating users shares the login's hash slots. */
export async function userColumns(body: CreateUserBody, hash: Hash): Promise<NewUser>;
export async function userColumns(body: UpdateUserBody, hash: Hash): Promise<UserChanges>;
export async function userColumns(body: UpdateUserBody, hash: Hash): Promise<UserChanges> {
  // Undefined columns are left alone by the repository (not written on update, defaulted on insert).
  return {
    email: body.email,
    passwordHash: body.password === undefined ? undefined : await hash(body.password),
    ssoId: body.sso_id,
    role: body.role,
    isActive: body.is_active,
    messagingToken: body.messaging_token,
    messagingPhoneNumberId: body.messaging_phone_number_id,
    monthlyCredits: body.monthly_credits,
    messagingRate: body.messaging_rate,
  };
}

const CONFLICTS = {
  email: ['EMAIL_TAKEN', 'Another user has this e-mail address'],
  messaging_phone_number_id: ['PHONE_NUMBER_ID_TAKEN', 'Another user has this messaging phone number id'],
} as const;

/** The written user, or the 409 of the unique field that was already taken (or of the last active ADMIN). */
export function writtenUser(result: WriteResult): UserRow {
  if (!result.ok) {
    if (result.conflict === 'last_admin') throw lastAdmin();
    const [code, message] = CONFLICTS[result.conflict];
    throw new AppError(409, code, message);
  }
  return result.user;
}
