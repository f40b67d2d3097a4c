// Checks login credentials; an unknown e-mail costs the same argon2 verification as a wrong password.
import type { UserRow } from '../db/tables';
import type { UsersRepo } from '../db/users-repo';
import { dummyPasswordHash, verifyPassword } from './passwords';

/** The user whose password this is, or undefined (unknown e-mail or wrong password alike). */
export async function checkCredentials(
  users: UsersRepo, email: string, password: string, verify = verifyPassword,
): Promise<UserRow | undefined> {
  const user = users.findByEmail(email);
  const matches = await verify(user?.passwordHash ?? await dummyPasswordHash(), password);
  return user && matches ? user : undefined;
}
