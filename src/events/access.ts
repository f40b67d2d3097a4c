// Who may use a user's keys, events and endpoints: the user itself or an ADMIN (another CLIENT learns nothing).
import type { UserRow } from '../db/tables';
import { forbidden, userNotFound } from '../errors';

export function checkUserScope(caller: UserRow, userId: number, findUser: (id: number) => UserRow | undefined): UserRow {
  if (caller.id !== userId && caller.role !== 'ADMIN') throw forbidden("You may only use your own keys, events and endpoints");
  const user = findUser(userId);
  if (!user) throw userNotFound();
  return user;
}
