// User administration (SPEC §4): create, update, delete, list and read — administrators only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams, withHeaders } from '../../schemas/common';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, User, UserList } from '../../schemas/users';
import { AppError, lastAdmin, userNotFound } from '../errors';
import { actorOf, recordAudit } from '../services/audit';
import { auditUserCreated, auditUserUpdated } from '../services/user-audit';
import { userColumns, writtenUser } from '../services/user-fields';
import { publicUserNow } from '../views/user-view';

const users: FastifyPluginAsyncTypebox = async (app) => {
  const adminOnly = app.requireRole('ADMIN');
  const tags = ['users'];
  const security = SessionSecurity;

  app.post('/api/user/create', {
    preValidation: adminOnly,
    schema: {
      tags, security, operationId: 'createUser', summary: 'Create a user',
      description: 'Conflicts: 409 `EMAIL_TAKEN` or `PHONE_NUMBER_ID_TAKEN`.',
      body: CreateUserBody,
      response: {
        201: withHeaders(User, { location: Type.String({ description: 'The new user: `/api/user/{id}`', examples: ['/api/user/2'] }) }),
        ...errors(400, 401, 403, 409, 413, 415, 503),
      },
    },
  }, async (request, reply) => {
    const columns = await userColumns(request.body, app.passwords.hash);
    const actor = actorOf(request.currentUser, request.ip);
    // The audit entry is written in the same transaction as the user.
    const user = writtenUser(await app.writer.write(() => {
      const result = app.usersRepo.create(columns, app.now());
      if (result.ok) auditUserCreated(app.auditRepo, actor, result.user, app.now());
      return result;
    }));
    return reply.code(201).header('location', `/api/user/${user.id}`).send(publicUserNow(user, app));
  });

  app.put('/api/user/update/:id', {
    preValidation: adminOnly,
    schema: {
      tags, security, operationId: 'updateUser', summary: 'Update a user',
      description: 'Any non-empty subset of the create fields. 404 `USER_NOT_FOUND`; 409 `EMAIL_TAKEN`, `PHONE_NUMBER_ID_TAKEN`, '
        + '`LAST_ADMIN` (no active ADMIN would remain) or `CANNOT_DEMOTE_SELF`. A new password ends every session of the user.',
      params: IdParams, body: UpdateUserBody,
      response: { 200: User, ...errors(400, 401, 403, 404, 409, 413, 415, 503) },
    },
  }, async (request) => {
    const { id } = request.params;
    const demotesSelf = request.body.role === 'CLIENT' || request.body.is_active === false;
    if (id === request.currentUser!.id && demotesSelf) {
      throw new AppError(409, 'CANNOT_DEMOTE_SELF', 'You cannot remove your own ADMIN role or disable yourself');
    }
    // The last-ADMIN rule is decided by the repository inside the writing transaction, after the hashing await.
    const columns = await userColumns(request.body, app.passwords.hash);
    const actor = actorOf(request.currentUser, request.ip);
    const given = Object.keys(request.body);
    const result = await app.writer.write(() => {
      const before = app.usersRepo.findById(id);
      const written = app.usersRepo.update(id, columns, app.now());
      if (before && written?.ok) auditUserUpdated(app.auditRepo, actor, before, written.user, given, app.now());
      return written;
    });
    if (!result) throw userNotFound();
    app.eventStreams.recheck(id);
    return publicUserNow(writtenUser(result), app);
  });

  app.delete('/api/user/delete/:id', {
    preValidation: adminOnly,
    schema: {
      tags, security, operationId: 'deleteUser', summary: 'Delete a user',
      description: '404 `USER_NOT_FOUND`; 409 `CANNOT_DELETE_SELF` or `LAST_ADMIN` (no active ADMIN would remain).',
      params: IdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errors(400, 401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    if (id === request.currentUser!.id) throw new AppError(409, 'CANNOT_DELETE_SELF', 'You cannot delete your own account');
    const actor = actorOf(request.currentUser, request.ip);
    const outcome = await app.writer.write(() => {
      const before = app.usersRepo.findById(id);
      const deleted = app.usersRepo.delete(id);
      if (before && deleted === 'deleted') {
        recordAudit(app.auditRepo, { actor, action: 'user.deleted', target: { id, email: before.email }, at: app.now(), details: { role: before.role } });
      }
      return deleted;
    });
    if (outcome === 'not_found') throw userNotFound();
    if (outcome === 'last_admin') throw lastAdmin();
    app.eventStreams.recheck(id);
    // The user's messages went with it (cascade): their media files go now, not at the next hourly sweep.
    await app.mediaDownloads.sweepOrphans().catch((error: unknown) => request.log.error({ err: error }, 'media files of the deleted user not removed; the hourly sweep retries'));
    return reply.code(204).send(null);
  });

  app.get('/api/users', {
    preValidation: adminOnly,
    schema: {
      tags, security, operationId: 'listUsers', summary: 'List users', description: 'Oldest first; `total` counts every user.',
      querystring: ListUsersQuery, response: { 200: UserList, ...errors(400, 401, 403) },
    },
  }, async (request) => {
    const page = app.usersRepo.list(request.query.limit, request.query.offset);
    return { users: page.users.map((user) => publicUserNow(user, app)), total: page.total };
  });

  app.get('/api/user/:id', {
    preValidation: adminOnly,
    schema: { tags, security, operationId: 'getUser', summary: 'Read a user', params: IdParams, response: { 200: User, ...errors(400, 401, 403, 404) } },
  }, async (request) => {
    const user = app.usersRepo.findById(request.params.id);
    if (!user) throw userNotFound();
    return publicUserNow(user, app);
  });
};
export default users;
