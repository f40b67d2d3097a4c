// A new random password for a user, shown once, ending every session of the user (the token version moves on).
// Shared by the API's reset (POST /api/user/{id}/reset-password) and `npm run admin -- reset-password`.
import { randomBytes } from 'node:crypto';
import type { UserRow } from '../db/tables';
import type { UsersRepo, WriteResult } from '../db/users-repo';

/** 20 characters of base64url: 120 random bits. */
export const randomPassword = () => randomBytes(15).toString('base64url');

export interface ResetDeps {
  users: Pick<UsersRepo, 'update'>;
  hash: (password: string) => Promise<string>;
  /** Runs the synchronous write body (the app's writer, or writeNow in the shell). */
  write: <T>(body: () => T) => Promise<T> | T;
  now: () => Date;
}

/**
 * Hashes a new password, then in one write: `find` the user, store the hash (which bumps its token version) and run
 * `alsoWrite` (an audit entry) in the same transaction. Undefined when `find` finds no user.
 */
export async function resetPassword(deps: ResetDeps, find: () => UserRow | undefined, alsoWrite?: (user: UserRow) => void):
  Promise<{ user: UserRow; password: string } | undefined> {
  const password = randomPassword();
  const passwordHash = await deps.hash(password);
  const changed = await deps.write((): WriteResult | undefined => {
    const user = find();
    const result = user ? deps.users.update(user.id, { passwordHash }, deps.now()) : undefined;
    if (result?.ok) alsoWrite?.(result.user);
    return result;
  });
  return changed?.ok ? { user: changed.user, password } : undefined;
}
