// API user fields -> database columns; a given password becomes its argon2id hash.
import type { CreateUserBody, UpdateUserBody } from '../../schemas/users';
import type { NewUser, UserChanges } from '../db/users-repo';
import { hashPassword } from './passwords';

export async function userColumns(body: CreateUserBody): Promise<NewUser>;
export async function userColumns(body: UpdateUserBody): Promise<UserChanges>;
export async function userColumns(body: UpdateUserBody): Promise<UserChanges> {
  // Undefined columns are left alone by the repository (not written on update, defaulted on insert).
  return {
    email: body.email,
    passwordHash: body.password === undefined ? undefined : await hashPassword(body.password),
    ssoId: body.sso_id,
    role: body.role,
    isActive: body.is_active,
    messagingToken: body.messaging_token,
    messagingPhoneNumberId: body.messaging_phone_number_id,
    monthlyCredits: body.monthly_credits,
  };
}
