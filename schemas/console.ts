// Schemas of the console's endpoints: a user's usage in a month, a password reset's answer, the audit log.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RequestBody, Timestamp } from './common';

export const Month = Type.String({ pattern: '^(19|2[0-9])[0-9]{2}-(0[1-9]|1[0-2])$', description: 'A calendar month, YYYY-MM (1900–2999)', examples: ['2026-11'] });

export const UsageQuery = Type.Object({
  month: Type.Optional({ ...Month, description: 'The calendar month in TIMEZONE, YYYY-MM; this month when absent' }),
}, { additionalProperties: false });
export type UsageQuery = Static<typeof UsageQuery>;

/** Outcomes counted; every one is present (0 when none). */
export const SEND_OUTCOMES = ['pending', 'accepted', 'sent', 'delivered', 'read', 'failed'] as const;

export const Usage = Type.Object({
  user_id: Type.Integer(),
  month: Type.String({ description: 'YYYY-MM' }),
  timezone: Type.String({ description: 'The zone the month is counted in (TIMEZONE)' }),
  from: Timestamp,
  to: Type.String({ format: 'date-time', description: 'The first instant after the month (exclusive)' }),
  monthly_credits: Type.Integer({ description: 'The allowance now (it applies to every month)' }),
  credits_used: Type.Integer({ description: 'Credits taken in this month' }),
  credits_remaining: Type.Integer(),
  sends: Type.Object({
    total: Type.Integer({ description: 'Messages sent (created) in the month' }),
    by_status: Type.Object(Object.fromEntries(SEND_OUTCOMES.map((s) => [s, Type.Integer()])) as Record<(typeof SEND_OUTCOMES)[number], ReturnType<typeof Type.Integer>>,
      { description: 'By their current state' }),
    by_error_code: Type.Array(Type.Object({ code: Type.String(), count: Type.Integer() }),
      { description: "Failed sends by the network's error code (or the gateway's, e.g. MESSAGING_UNAVAILABLE), most frequent first" }),
  }),
  pricing: Type.Array(Type.Object({ category: Type.String(), count: Type.Integer() }),
    { description: "Delivered or read messages by the network's pricing category (from the status callbacks' pricing)" }),
}, { title: 'Usage' });
export type Usage = Static<typeof Usage>;

export const ResetPasswordBody = Type.Union([RequestBody({}), Type.Null()], { examples: [{}] });
export const ResetPasswordAnswer = Type.Object({
  password: Type.String({ description: 'The new password, shown once: it is stored only as a hash' }),
}, { title: 'ResetPassword' });

export const AuditQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Entries older than this id (the previous page\'s next_before_id)' })),
}, { additionalProperties: false });
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Timestamp,
  actor: Type.Object({ user_id: Nullable(Type.Integer()), email: Nullable(Type.String()) }),
  action: Type.String({ examples: ['user.created', 'user.credits_changed', 'webhook_event.replayed'] }),
  target: Type.Object({ user_id: Nullable(Type.Integer()), email: Nullable(Type.String()) }),
  details: Type.Record(Type.String(), Type.Unknown(), { description: 'What changed: field names and non-secret values' }),
  client_ip: Nullable(Type.String()),
}, { title: 'AuditEntry' });
export type AuditEntry = Static<typeof AuditEntry>;
export const AuditList = Type.Object({ entries: Type.Array(AuditEntry), next_before_id: Nullable(Type.Integer()) });
