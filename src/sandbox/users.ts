// The sandbox's users: each has a phone number and/or a business-scoped user id (BSUID), as the network knows them.
import { createHash } from 'node:crypto';
import type { SandboxUser } from '../../schemas/sandbox';
import { InboundError } from './wire';

/** A user as the sandbox answers and calls back about them; `phone` is only shown when `phoneShareable`. */
export interface User { phone?: string; userId: string; parentUserId?: string; username?: string; name?: string; phoneShareable: boolean }

/** The stable made-up BSUID of a phone number: `US.` and 20 digits derived from the number (the same in every sandbox). */
export function sandboxUserId(phone: string): string {
  const digest = createHash('sha256').update(`sandbox-user:${phone}`).digest();
  return `US.${(digest.readBigUInt64BE(0) % 10n ** 20n).toString().padStart(20, '1')}`;
}

/** What callbacks and answers say about a user: a shown phone (`waId`) and the ids and profile. */
export interface CallbackUser { waId?: string; userId?: string; parentUserId?: string; username?: string; name?: string }

export const shownPhone = (user: User): string | undefined => (user.phoneShareable ? user.phone : undefined);

export function createUsers() {
  const byPhone = new Map<string, User>();
  const byId = new Map<string, User>();

  function forget(user: User): void {
    if (user.phone !== undefined && byPhone.get(user.phone) === user) byPhone.delete(user.phone);
    if (byId.get(user.userId) === user) byId.delete(user.userId);
  }

  return {
    /** Adds (or replaces) a user; a phone without a BSUID gets its stable made-up one. */
    add(spec: SandboxUser): User {
      if (spec.phone === undefined && spec.userId === undefined) throw new InboundError('give phone, userId or both');
      const user: User = {
        ...(spec.phone === undefined ? {} : { phone: spec.phone }),
        userId: spec.userId ?? sandboxUserId(spec.phone!),
        ...(spec.parentUserId === undefined ? {} : { parentUserId: spec.parentUserId }),
        ...(spec.username === undefined ? {} : { username: spec.username }),
        ...(spec.name === undefined ? {} : { name: spec.name }),
        phoneShareable: spec.phoneShareable ?? true,
      };
      for (const old of [user.phone === undefined ? undefined : byPhone.get(user.phone), byId.get(user.userId)]) if (old) forget(old);
      if (user.phone !== undefined) byPhone.set(user.phone, user);
      byId.set(user.userId, user);
      return user;
    },
    list: (): User[] => [...byId.values()],
    /** The added user with this phone or BSUID (phone first), if any. */
    find: (phone?: string, userId?: string): User | undefined =>
      (phone === undefined ? undefined : byPhone.get(phone)) ?? (userId === undefined ? undefined : byId.get(userId)),
    /** The user a send to this phone reaches: the added one, else one with the phone's made-up BSUID. */
    forPhone: (phone: string): User => byPhone.get(phone) ?? { phone, userId: sandboxUserId(phone), phoneShareable: true },
    /** The user a send to this BSUID reaches: the added one, else a user known only by it. */
    forUserId: (userId: string): User => byId.get(userId) ?? { userId, phoneShareable: false },
  };
}
export type Users = ReturnType<typeof createUsers>;
