// Data access for users. Emails are compared lower-cased; unique violations surface as typed results.
import { and, count, eq, ne, sql } from 'drizzle-orm';
import { inTransaction, type DB } from './client';
import { users, type UserRow } from './tables';

export type NewUser = Omit<typeof users.$inferInsert, 'id' | 'createdAt' | 'updatedAt' | 'tokenVersion'>;
export type UserChanges = Partial<NewUser>;
export type UniqueField = 'email' | 'messaging_phone_number_id';
/** `last_admin`: the change would leave no active ADMIN. */
export type WriteResult = { ok: true; user: UserRow } | { ok: false; conflict: UniqueField | 'last_admin' };
export type DeleteResult = 'deleted' | 'not_found' | 'last_admin';

function conflictOf(error: unknown): UniqueField | undefined {
  const message = error instanceof Error ? error.message : '';
  if (!message.includes('UNIQUE constraint failed')) return undefined;
  return message.includes('messaging_phone_number_id') ? 'messaging_phone_number_id' : 'email';
}

export function createUsersRepo(db: DB) {
  const byId = db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  const byEmail = db.select().from(users).where(eq(users.email, sql.placeholder('email'))).prepare();
  const otherActiveAdmins = db.select({ n: count() }).from(users)
    .where(and(eq(users.role, 'ADMIN'), eq(users.isActive, true), ne(users.id, sql.placeholder('id')))).prepare();

  /** Whether turning `before` into `after` removes the last active ADMIN. Only inside the writing transaction. */
  function removesLastAdmin(before: UserRow, after: Pick<UserRow, 'role' | 'isActive'>): boolean {
    const wasActiveAdmin = before.role === 'ADMIN' && before.isActive;
    const staysActiveAdmin = after.role === 'ADMIN' && after.isActive;
    return wasActiveAdmin && !staysActiveAdmin && (otherActiveAdmins.get({ id: before.id })?.n ?? 0) === 0;
  }

  function write(run: () => UserRow | undefined): WriteResult | undefined {
    try {
      const user = run();
      return user ? { ok: true, user } : undefined;
    } catch (error) {
      const conflict = conflictOf(error);
      if (conflict) return { ok: false, conflict };
      throw error;
    }
  }

  return {
    findById: (id: number): UserRow | undefined => byId.get({ id }),
    findByEmail: (email: string): UserRow | undefined => byEmail.get({ email: email.toLowerCase() }),
    findByPhoneNumberId: (phoneNumberId: string): UserRow | undefined =>
      db.select().from(users).where(eq(users.messagingPhoneNumberId, phoneNumberId)).get(),
    countAdmins: (): number => db.select({ n: count() }).from(users).where(eq(users.role, 'ADMIN')).get()?.n ?? 0,

    create(fields: NewUser, now: Date): WriteResult {
      const at = now.getTime();
      return write(() => db.insert(users)
        .values({ ...fields, email: fields.email.toLowerCase(), createdAt: at, updatedAt: at })
        .returning().get())!;
    },

    /**
     * Undefined when no such user. A password change bumps the token version. Demoting or disabling
     * the last active ADMIN is refused in the same IMMEDIATE transaction that writes: two concurrent
     * demotions are serialised, and the second one sees the first.
     */
    update(id: number, changes: UserChanges, now: Date): WriteResult | undefined {
      const set: Record<string, unknown> = { ...changes, updatedAt: now.getTime() };
      if (changes.email !== undefined) set.email = changes.email.toLowerCase();
      if (changes.passwordHash !== undefined) set.tokenVersion = sql`${users.tokenVersion} + 1`;
      let lastAdmin = false;
      const result = write(() => inTransaction(db, () => {
        const before = byId.get({ id });
        if (!before) return undefined;
        lastAdmin = removesLastAdmin(before, { role: changes.role ?? before.role, isActive: changes.isActive ?? before.isActive });
        if (lastAdmin) return undefined;
        return db.update(users).set(set as typeof users.$inferInsert).where(eq(users.id, id)).returning().get();
      }));
      return lastAdmin ? { ok: false, conflict: 'last_admin' } : result;
    },

    /**
     * Conversations, messages and credits go with the user (ON DELETE CASCADE, one statement); the
     * last active ADMIN stays, decided in the deleting transaction.
     */
    delete: (id: number): DeleteResult => inTransaction(db, () => {
      const before = byId.get({ id });
      if (!before) return 'not_found';
      if (removesLastAdmin(before, { role: 'CLIENT', isActive: false })) return 'last_admin';
      db.delete(users).where(eq(users.id, id)).run();
      return 'deleted';
    }),

    /** Logout everywhere: every JWT issued so far carries an older `ver`. False when no such user. */
    endAllSessions: (id: number): boolean =>
      db.update(users).set({ tokenVersion: sql`${users.tokenVersion} + 1` }).where(eq(users.id, id)).run().changes > 0,

    list(limit: number, offset: number): { users: UserRow[]; total: number } {
      const rows = db.select().from(users).orderBy(users.id).limit(limit).offset(offset).all();
      const total = db.select({ n: count() }).from(users).get()?.n ?? 0;
      return { users: rows, total };
    },
  };
}
export type UsersRepo = ReturnType<typeof createUsersRepo>;
