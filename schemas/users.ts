// Schemas of the user endpoints (SPEC §4): the user object and the create/update bodies.
import { Type, type Static } from '@sinclair/typebox';
import { Email, Nullable, Pagination, RequestBody, Timestamp } from './common';

export const Role = Type.Unsafe<'ADMIN' | 'CLIENT'>(Type.String({ enum: ['ADMIN', 'CLIENT'] }));

export const PhoneNumberId = Type.String({ pattern: '^[0-9]{1,32}$', description: "The network's id of the sender phone number", examples: ['106540352242922'] });

/** The user object of every user endpoint: never the password, its hash or the messaging token. */
export const User = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  sso_id: Nullable(Type.String()),
  role: Role,
  is_active: Type.Boolean(),
  messaging_phone_number_id: Nullable(Type.String()),
  messaging_token_set: Type.Boolean(),
  messaging_token_last4: Nullable(Type.String({
    description: 'The last 4 characters of the stored messaging token, to tell which one is set; null when none is set, '
      + 'when it is shorter than 12 characters (4 would give too much of it away) or when this key cannot decrypt it',
  })),
  monthly_credits: Type.Integer(),
  messaging_rate: Type.Integer({ description: 'Messages per second the gateway sends to the network for this phone number id' }),
  credits_used: Type.Integer({ description: 'Credits used this calendar month (in TIMEZONE)' }),
  credits_remaining: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'User' });
export type User = Static<typeof User>;

export const UserList = Type.Object({ users: Type.Array(User), total: Type.Integer() });

export const ListUsersQuery = Pagination;

// The writable fields; null clears an optional one.
const writable = {
  email: Email,
  password: Type.String({ minLength: 8, maxLength: 256 }),
  sso_id: Nullable(Type.String({ minLength: 1, maxLength: 256 })),
  role: Role,
  is_active: Type.Boolean(),
  // It goes into an HTTP header: visible ASCII only (no spaces, control or non-ASCII characters).
  messaging_token: Nullable(Type.String({
    minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7E]{1,4096}$',
    description: 'Write-only; stored encrypted. 1–4096 visible ASCII characters (no spaces or control characters)',
  })),
  messaging_phone_number_id: Nullable(PhoneNumberId),
  monthly_credits: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  messaging_rate: Type.Integer({
    minimum: 1, maximum: 1000,
    description: 'Messages per second sent to the network for this phone number id (80 by default; 1,000 after the network upgraded the number, 20 for a number also used in the phone app)',
  }),
};

export const CreateUserBody = RequestBody({
  email: writable.email,
  password: writable.password,
  sso_id: Type.Optional(writable.sso_id),
  role: Type.Optional({ ...writable.role, default: 'CLIENT' }),
  is_active: Type.Optional({ ...writable.is_active, default: true }),
  messaging_token: Type.Optional(writable.messaging_token),
  messaging_phone_number_id: Type.Optional(writable.messaging_phone_number_id),
  monthly_credits: Type.Optional({ ...writable.monthly_credits, default: 0 }),
  messaging_rate: Type.Optional({ ...writable.messaging_rate, default: 80 }),
}, {
  examples: [{
    email: 'ana@example.com', password: 'correct horse battery', role: 'CLIENT', sso_id: 'ext-42',
    messaging_token: 'EAAG-example-token', messaging_phone_number_id: '106540352242922', monthly_credits: 1000,
  }],
});
export type CreateUserBody = Static<typeof CreateUserBody>;

// PUT, not POST: the body carries no `token` (SPEC §3 reads it from POST bodies only).
export const UpdateUserBody = Type.Partial(Type.Object(writable), {
  additionalProperties: false, minProperties: 1, description: 'Any non-empty subset of the create fields; null clears an optional one',
  examples: [{ monthly_credits: 2000, is_active: true, sso_id: null }],
});
export type UpdateUserBody = Static<typeof UpdateUserBody>;
