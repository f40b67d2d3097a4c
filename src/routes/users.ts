// User administration (SPEC §4): create, update, delete, list and read — administrators only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SessionSecurity } from '../../schemas/auth';
import { errors, IdParams } from '../../schemas/common';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, User, UserList } from '../../schemas/users';
import type { UserRow } from '../db/tables';
import type { WriteResult } from '../db/users-repo';
import { AppError, userNotFound } from '../errors';
import { userColumns } from '../services/user-fields';
import { publicUserNow } from '../services/user-view';

const CONFLICTS = {
  email: ['EMAIL_TAKEN', 'Another user has this e-mail address'],
  messaging_phone_number_id: ['PHONE_NUMBER_ID_TAKEN', 'Another user has this messaging phone number id'],
} as const;

/** The written user, or the 409 of the unique field that was already taken. */
function written(result: WriteResult): UserRow {
  if (!result.ok) {
    const [code, message] = CONFLICTS[result.conflict];
    throw new AppError(409, code, message);
  }
  return result.user;
}

const users: FastifyPluginAsyncTypebox = async (app) => {
  const adminOnly = app.requireRole('ADMIN');
  const view = (user: UserRow) => publicUserNow(user, app);
  const tags = ['users'];
  const security = SessionSecurity;

  app.post('/api/user/create', {
    preValidation: adminOnly,
    schema: { tags, security, body: CreateUserBody, response: { 201: User, ...errors(400, 401, 403, 409) } },
  }, async (request, reply) => {
    const user = written(app.usersRepo.create(await userColumns(request.body), app.now()));
    return reply.code(201).send(view(user));
  });

  app.put('/api/user/update/:id', {
    preValidation: adminOnly,
    schema: { tags, security, params: IdParams, body: UpdateUserBody, response: { 200: User, ...errors(400, 401, 403, 404, 409) } },
  }, async (request) => {
    const { id } = request.params;
    const demotesSelf = request.body.role === 'CLIENT' || request.body.is_active === false;
    if (id === request.currentUser!.id && demotesSelf) {
      throw new AppError(409, 'CANNOT_DEMOTE_SELF', 'You cannot remove your own ADMIN role or disable yourself');
    }
    const result = app.usersRepo.update(id, await userColumns(request.body), app.now());
    if (!result) throw userNotFound();
    return view(written(result));
  });

  app.delete('/api/user/delete/:id', {
    preValidation: adminOnly,
    schema: { tags, security, params: IdParams, response: { 204: Type.Null({ description: 'Deleted' }), ...errors(400, 401, 403, 404, 409) } },
  }, async (request, reply) => {
    const { id } = request.params;
    if (id === request.currentUser!.id) throw new AppError(409, 'CANNOT_DELETE_SELF', 'You cannot delete your own account');
    if (!app.usersRepo.delete(id)) throw userNotFound();
    return reply.code(204).send(null);
  });

  app.get('/api/users', {
    preValidation: adminOnly,
    schema: { tags, security, querystring: ListUsersQuery, response: { 200: UserList, ...errors(400, 401, 403) } },
  }, async (request) => {
    const page = app.usersRepo.list(request.query.limit, request.query.offset);
    return { users: page.users.map(view), total: page.total };
  });

  app.get('/api/user/:id', {
    preValidation: adminOnly,
    schema: { tags, security, params: IdParams, response: { 200: User, ...errors(400, 401, 403, 404) } },
  }, async (request) => {
    const user = app.usersRepo.findById(request.params.id);
    if (!user) throw userNotFound();
    return view(user);
  });
};
export default users;
