// Data access for users. Emails are compared lower-cased; unique violations surface as typed results.
// Messaging tokens are sealed on every write: rows carry the sealed form, the send path opens it.
import { randomBytes } from 'node:crypto';
import { and, count, eq, isNotNull, ne, sql } from 'drizzle-orm';
import { isSealed, type TokenCipher } from '../support/token-cipher';
import { inTransaction, type DB } from './client';
import { users, type UserRow } from './tables';

export type NewUser = Omit<typeof users.$inferInsert, 'id' | 'createdAt' | 'updatedAt' | 'tokenVersion' | 'sessionEpoch'>;
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

export function createUsersRepo(db: DB, tokens: TokenCipher) {
  const sealed = (token: string | null | undefined) => (token ? tokens.seal(token) : token);
  const storedTokens = () => db.select({ id: users.id, token: users.messagingToken }).from(users).where(isNotNull(users.messagingToken)).all();

  // Every authenticated request reads its user, every webhook callback routes by phone number id: plain prepared
  // statements whose rows are UserRows once is_active is a boolean (Drizzle's row mapping cost more than the query).
  const userBy = (column: string) => {
    const statement = db.$client.prepare<[unknown], UserRow>(`SELECT id, email, password_hash AS passwordHash, sso_id AS ssoId, role,
      is_active AS isActive, messaging_token AS messagingToken, messaging_phone_number_id AS messagingPhoneNumberId,
      monthly_credits AS monthlyCredits, messaging_rate AS messagingRate, token_version AS tokenVersion, session_epoch AS sessionEpoch, created_at AS createdAt, updated_at AS updatedAt
      FROM users WHERE ${column} = ?`);
    return (key: unknown): UserRow | undefined => {
      const row = statement.get(key);
      if (row) row.isActive = Boolean(row.isActive);
      return row;
    };
  };
  const byId = userBy('id');
  const byEmail = userBy('email');
  const byPhoneNumberId = userBy('messaging_phone_number_id');
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
    findById: (id: number): UserRow | undefined => byId(id),
    findByEmail: (email: string): UserRow | undefined => byEmail(email.toLowerCase()),
    findByPhoneNumberId: (phoneNumberId: string): UserRow | undefined => byPhoneNumberId(phoneNumberId),
    countAdmins: (): number => db.select({ n: count() }).from(users).where(eq(users.role, 'ADMIN')).get()?.n ?? 0,

    create(fields: NewUser, now: Date): WriteResult {
      const at = now.getTime();
      return write(() => db.insert(users)
        .values({
          ...fields, email: fields.email.toLowerCase(), messagingToken: sealed(fields.messagingToken),
          // A fresh random epoch: no session issued for an earlier row with this id (before a restore) matches it.
          sessionEpoch: randomBytes(16).toString('hex'), createdAt: at, updatedAt: at,
        })
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
      if (changes.messagingToken !== undefined) set.messagingToken = sealed(changes.messagingToken);
      if (changes.passwordHash !== undefined) set.tokenVersion = sql`${users.tokenVersion} + 1`;
      let lastAdmin = false;
      const result = write(() => inTransaction(db, () => {
        const before = byId(id);
        if (!before) return undefined;
        lastAdmin = removesLastAdmin(before, { role: changes.role ?? before.role, isActive: changes.isActive ?? before.isActive });
        if (lastAdmin) return undefined;
        return db.update(users).set(set as typeof users.$inferInsert).where(eq(users.id, id)).returning().get();
      }));
      return lastAdmin ? { ok: false, conflict: 'last_admin' } : result;
    },

    /** Seals the tokens an older version stored in plain text, in one transaction; how many there were. */
    sealPlainTokens(): number {
      return inTransaction(db, () => {
        const plain = storedTokens().filter((row) => !isSealed(row.token!));
        for (const row of plain) db.update(users).set({ messagingToken: tokens.seal(row.token!) }).where(eq(users.id, row.id)).run();
        return plain.length;
      });
    },

    /** How many stored tokens this key cannot open (a changed or lost key). */
    countUnreadableTokens: (): number => storedTokens().filter((row) => tokens.open(row.token!) === undefined).length,

    /**
     * Conversations, messages and credits go with the user (ON DELETE CASCADE, one statement); the
     * last active ADMIN stays, decided in the deleting transaction.
     */
    delete: (id: number): DeleteResult => inTransaction(db, () => {
      const before = byId(id);
      if (!before) return 'not_found';
      if (removesLastAdmin(before, { role: 'CLIENT', isActive: false })) return 'last_admin';
      db.delete(users).where(eq(users.id, id)).run();
      return 'deleted';
    }),

    /** Logout everywhere: every JWT issued so far carries an older `ver`. False when no such user. */
    endAllSessions: (id: number): boolean =>
      db.update(users).set({ tokenVersion: sql`${users.tokenVersion} + 1` }).where(eq(users.id, id)).run().changes > 0,

    /** Oldest first; `emailContains` (any case) keeps the users whose e-mail contains it. */
    list(limit: number, offset: number, emailContains?: string): { users: UserRow[]; total: number } {
      // instr, not LIKE: the text is taken literally (no % or _ wildcards to escape).
      const where = emailContains ? sql`instr(${users.email}, ${emailContains.toLowerCase()}) > 0` : undefined;
      const rows = db.select().from(users).where(where).orderBy(users.id).limit(limit).offset(offset).all();
      const total = db.select({ n: count() }).from(users).where(where).get()?.n ?? 0;
      return { users: rows, total };
    },
  };
}
export type UsersRepo = ReturnType<typeof createUsersRepo>;
