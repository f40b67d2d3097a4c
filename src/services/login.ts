// Checks login credentials; an unknown e-mail costs the same argon2 verification as a wrong password.
import type { UserRow } from '../db/tables';
import type { UsersRepo } from '../db/users-repo';
import { dummyPasswordHash, type PasswordHasher } from './passwords';

/**
 * The user whose password this is, or undefined (unknown e-mail or wrong password alike).
 * `verify` is the app's bounded PasswordHasher.verify, so a flood of logins waits for hash slots.
 */
export async function checkCredentials(
  users: UsersRepo, email: string, password: string, verify: PasswordHasher['verify'],
): Promise<UserRow | undefined> {
  const user = users.findByEmail(email);
  const matches = await verify(user?.passwordHash ?? await dummyPasswordHash(), password);
  return user && matches ? user : undefined;
}
