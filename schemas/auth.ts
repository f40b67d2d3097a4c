// Schemas of login, logout and the session (SPEC §3).
import { Type, type Static } from '@sinclair/typebox';
import { RequestBody } from './common';

// Login does not check the e-mail format: a malformed address simply matches no user (401).
export const LoginBody = RequestBody({
  email: Type.String({ minLength: 1, maxLength: 254, examples: ['ana@example.com'] }),
  password: Type.String({ minLength: 1, maxLength: 256 }),
}, { examples: [{ email: 'ana@example.com', password: 'correct horse battery' }] });
export type LoginBody = Static<typeof LoginBody>;

/** Logout takes no fields; the body may be absent, empty or `{}` (or carry only `token`). */
export const LogoutBody = Type.Union([RequestBody({}), Type.Null()], { examples: [{}] });

export const LogoutQuery = Type.Object({
  all: Type.Boolean({ default: false, description: 'End every session of the user, not only this one' }),
}, { additionalProperties: false });

export const Message = Type.Object({ message: Type.String() });

/** OpenAPI `security` of routes that need a session: a Bearer JWT or the `token` cookie. */
export const SessionSecurity: Array<Record<string, string[]>> = [{ bearer: [] }, { cookie: [] }];
