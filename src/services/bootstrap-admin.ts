// First start: with no ADMIN in the database, create one (SPEC §1), never a second.
import { randomBytes } from 'node:crypto';
import type { UsersRepo } from '../db/users-repo';
import { hashPassword } from './passwords';

export interface BootstrapResult { email: string; generatedPassword?: string }

export async function ensureAdmin(
  users: UsersRepo,
  given: { email?: string; password?: string },
  now: Date,
): Promise<BootstrapResult | undefined> {
  if (users.countAdmins() > 0) return undefined;
  const email = given.email ?? 'admin@localhost';
  const generatedPassword = given.password ? undefined : randomBytes(12).toString('base64url');
  const passwordHash = await hashPassword(given.password ?? generatedPassword!);
  // Re-check after the await: two processes starting at once must not both create one.
  if (users.countAdmins() > 0) return undefined;
  const existing = users.findByEmail(email);
  if (existing) {
    users.update(existing.id, { role: 'ADMIN', isActive: true, passwordHash }, now);
  } else {
    const result = users.create({ email, passwordHash, role: 'ADMIN' }, now);
    if (!result.ok) return undefined;
  }
  return { email, generatedPassword };
}
