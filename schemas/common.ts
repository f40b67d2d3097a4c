// Shared schemas: ids, timestamps, pagination, the error shape and the `token` body field.
import { Type, type Static, type ObjectOptions, type TProperties, type TSchema } from '@sinclair/typebox';

export const IdParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Positive integer id' }),
}, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

/** OpenAPI 3.0's `nullable`, understood by Ajv and fast-json-stringify alike. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC', examples: ['2026-11-21T10:00:00.000Z'] });

/** The one e-mail rule, for the API's `email` format and ADMIN_EMAIL alike: `admin@localhost` passes; control characters never. */
export const EMAIL_PATTERN = /^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f]+$/;
export const Email = Type.String({
  format: 'email', minLength: 3, maxLength: 254, examples: ['ana@example.com'],
  description: 'One `@` with at least one character on each side, no whitespace or control characters (`admin@localhost` is valid)',
});

export const Pagination = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
}, { additionalProperties: false });

export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String(),
  error: Type.String(),
  message: Type.String(),
}, { title: 'ErrorResponse', additionalProperties: true, description: 'The one error shape of every error answer: HTTP status, a machine code, the reason phrase and a human message' });

/** A JWT may ride in the `token` field of every POST body. */
const BodyToken = { token: Type.Optional(Type.String({ maxLength: 4096, description: 'JWT, when not sent as a header or cookie' })) };

/** A request body: unknown properties are rejected, `token` is always allowed. */
export function RequestBody<T extends TProperties>(properties: T, options: Omit<ObjectOptions, 'additionalProperties'> = {}) {
  return Type.Object({ ...properties, ...BodyToken }, { ...options, additionalProperties: false });
}

/** Documents the headers an answer carries (OpenAPI only: the serializer ignores a `headers` keyword). */
export function withHeaders<T extends TSchema>(schema: T, headers: Record<string, TSchema>): T {
  return { ...schema, headers };
}

/** The error responses a route documents, in addition to its success. */
export function errors(...statusCodes: number[]) {
  return Object.fromEntries(statusCodes.map((s) => [s, ErrorResponse]));
}
