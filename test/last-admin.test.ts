// The last active ADMIN: no demotion, disabling or deletion may leave none, decided inside the writing transaction.
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';

const LAST_ADMIN = {
  statusCode: 409, code: 'LAST_ADMIN', error: 'Conflict',
  message: 'This is the last active administrator; make another user an active ADMIN first',
};

const activeAdmins = (app: App) => (app.db.$client
  .prepare("SELECT count(*) AS n FROM users WHERE role = 'ADMIN' AND is_active = 1").get() as { n: number }).n;

async function twoAdmins(t: { teardown(fn: () => unknown): void }) {
  const { app } = await buildTestApp(t);
  const a = await createAdmin(app, 'a@example.com');
  const b = await createAdmin(app, 'b@example.com');
  return { app, a, b };
}

const update = (app: App, caller: Parameters<typeof bearer>[1], id: number, payload: object) =>
  app.inject({ method: 'PUT', url: `/api/user/update/${id}`, headers: bearer(app, caller), payload });

// Each request also sets a new password: argon2 runs between authentication and the write, the window
// in which a check made outside the transaction let both pass.
for (const [what, change] of [['demote', { role: 'CLIENT' }], ['disable', { is_active: false }]] as const) {
  t.test(`two admins ${what} each other at once: exactly one succeeds, the other is LAST_ADMIN`, async (t) => {
    const { app, a, b } = await twoAdmins(t);
    const [byA, byB] = await Promise.all([
      update(app, a, b.id, { ...change, password: 'new-password-b' }),
      update(app, b, a.id, { ...change, password: 'new-password-a' }),
    ]);
    t.same([byA.statusCode, byB.statusCode].sort(), [200, 409]);
    t.same([byA, byB].find((res) => res.statusCode === 409)!.json(), LAST_ADMIN);
    t.equal(activeAdmins(app), 1, 'exactly one active admin is left');
    // a's change of b refused: b's change of a went through, and the other way round.
    const [changed, kept] = byA.statusCode === 409 ? [a, b] : [b, a];
    t.same(app.usersRepo.findById(kept.id), kept, 'the refused change wrote nothing, password included');
    t.not(app.usersRepo.findById(changed.id)!.passwordHash, changed.passwordHash, 'the accepted change wrote its password');
  });
}

t.test('an admin deletes the other while that one disables it: one succeeds, the other is LAST_ADMIN', async (t) => {
  const { app, a, b } = await twoAdmins(t);
  // The delete carries a body (`{}`) like the update, so both are authenticated before either writes;
  // b's update also hashes a new password in between.
  const [disable, remove] = await Promise.all([
    update(app, b, a.id, { is_active: false, password: 'new-password-a' }),
    app.inject({ method: 'DELETE', url: `/api/user/delete/${b.id}`, headers: bearer(app, a), payload: {} }),
  ]);
  t.equal(remove.statusCode, 204, 'the delete, with nothing to hash, writes first');
  t.equal(disable.statusCode, 409);
  t.same(disable.json(), LAST_ADMIN);
  t.equal(activeAdmins(app), 1);
  t.same(app.usersRepo.findById(a.id), a, 'a is untouched');
  t.equal(app.usersRepo.findById(b.id), undefined);
});

t.test('two admins delete each other at once: one delete passes, the other is LAST_ADMIN', async (t) => {
  const { app, a, b } = await twoAdmins(t);
  const answers = await Promise.all([
    app.inject({ method: 'DELETE', url: `/api/user/delete/${b.id}`, headers: bearer(app, a) }),
    app.inject({ method: 'DELETE', url: `/api/user/delete/${a.id}`, headers: bearer(app, b) }),
  ]);
  t.same(answers.map((res) => res.statusCode).sort(), [204, 409]);
  t.same(answers.find((res) => res.statusCode === 409)!.json(), LAST_ADMIN);
  t.equal(activeAdmins(app), 1);
  t.equal(app.usersRepo.list(10, 0).total, 1);
});

t.test('the repository refuses inside its transaction: demote, disable or delete the last active admin', async (t) => {
  const { app, a, b } = await twoAdmins(t);
  const now = app.now();
  t.match(app.usersRepo.update(b.id, { role: 'CLIENT' }, now), { ok: true, user: { role: 'CLIENT' } }, 'a non-last admin may go');
  t.same(app.usersRepo.update(a.id, { role: 'CLIENT' }, now), { ok: false, conflict: 'last_admin' });
  t.same(app.usersRepo.update(a.id, { isActive: false }, now), { ok: false, conflict: 'last_admin' });
  t.same(app.usersRepo.update(a.id, { role: 'ADMIN', isActive: false, monthlyCredits: 5 }, now), { ok: false, conflict: 'last_admin' });
  t.equal(app.usersRepo.delete(a.id), 'last_admin');
  t.match(app.usersRepo.findById(a.id), { role: 'ADMIN', isActive: true, monthlyCredits: 0 }, 'nothing was written');
  t.match(app.usersRepo.update(a.id, { monthlyCredits: 5, role: 'ADMIN', isActive: true }, now), { ok: true }, 'other changes pass');

  // An inactive admin is no active admin: it may go, and it does not count as another one.
  const off = await createUser(app, { email: 'off@example.com', role: 'ADMIN', isActive: false });
  t.same(app.usersRepo.update(a.id, { role: 'CLIENT' }, now), { ok: false, conflict: 'last_admin' });
  t.match(app.usersRepo.update(off.id, { role: 'CLIENT' }, now), { ok: true });
  t.equal(app.usersRepo.delete(off.id), 'deleted');
  t.equal(app.usersRepo.delete(999), 'not_found');
  t.equal(app.usersRepo.update(999, { role: 'CLIENT' }, now), undefined);
  t.equal(activeAdmins(app), 1);
});

t.test('demoting, disabling and deleting admins that are not the last one still works', async (t) => {
  const { app } = await buildTestApp(t);
  const a = await createAdmin(app, 'a@example.com');
  const b = await createAdmin(app, 'b@example.com');
  const c = await createAdmin(app, 'c@example.com');
  const demote = await update(app, a, b.id, { role: 'CLIENT' });
  t.equal(demote.statusCode, 200);
  t.equal(demote.json().role, 'CLIENT');
  const disable = await update(app, a, c.id, { is_active: false });
  t.equal(disable.statusCode, 200);
  t.equal(disable.json().is_active, false);
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/delete/${c.id}`, headers: bearer(app, a) })).statusCode, 204);
  t.equal(activeAdmins(app), 1);
  // The caller targeting itself keeps its own codes.
  const self = await update(app, a, a.id, { role: 'CLIENT' });
  t.equal(self.json().code, 'CANNOT_DEMOTE_SELF');
  const selfDelete = await app.inject({ method: 'DELETE', url: `/api/user/delete/${a.id}`, headers: bearer(app, a) });
  t.equal(selfDelete.json().code, 'CANNOT_DELETE_SELF');
});
