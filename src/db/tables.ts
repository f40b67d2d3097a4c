// Drizzle schema of the gateway: the single source for migrations and typed queries.
// Times are stored as integer milliseconds since the epoch (UTC); JSON blobs as text.
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable('users', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  // Stored lower-cased: login and uniqueness are case-insensitive.
  email: text('email').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  ssoId: text('sso_id'),
  role: text('role', { enum: ['ADMIN', 'CLIENT'] }).notNull().default('CLIENT'),
  isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
  messagingToken: text('messaging_token'),
  messagingPhoneNumberId: text('messaging_phone_number_id').unique(),
  monthlyCredits: integer('monthly_credits').notNull().default(0),
  // Messages per second sent to the network for this user's phone number id (the pacer's rate).
  messagingRate: integer('messaging_rate').notNull().default(80),
  // Bumped on password change; JWTs carrying an older `ver` are refused.
  tokenVersion: integer('token_version').notNull().default(1),
  // Random per row, carried in every JWT: a restored database's new user with a reused id never matches an old session.
  sessionEpoch: text('session_epoch').notNull().default(''),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

// One row per user and calendar month (in TIMEZONE): the allowance renews because a new month has no row.
export const creditUsage = sqliteTable('credit_usage', {
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  month: text('month').notNull(), // YYYY-MM
  used: integer('used').notNull().default(0),
}, (t) => [primaryKey({ columns: [t.userId, t.month] })]);

// Someone a user talks to: a phone number and/or the network's business-scoped user id (BSUID), never shared across users.
export const contacts = sqliteTable('contacts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  waId: text('wa_id'),
  bsuid: text('bsuid'),
  parentBsuid: text('parent_bsuid'),
  username: text('username'),
  name: text('name'),
  // Every identifier the contact was known by before (an earlier BSUID or number): a JSON array of strings.
  aliasesJson: text('aliases_json').notNull().default('[]'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [
  uniqueIndex('contacts_user_wa_id').on(t.userId, t.waId).where(sql`wa_id IS NOT NULL`),
  uniqueIndex('contacts_user_bsuid').on(t.userId, t.bsuid).where(sql`bsuid IS NOT NULL`),
]);

// One conversation per contact. contact_wa_id/contact_name are what older releases keyed and named it by (kept, unused).
export const conversations = sqliteTable('conversations', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  contactWaId: text('contact_wa_id').notNull(),
  contactName: text('contact_name'),
  lastMessageAt: integer('last_message_at').notNull(),
  lastInboundAt: integer('last_inbound_at'),
  contactId: integer('contact_id').references(() => contacts.id, { onDelete: 'cascade' }),
}, (t) => [
  uniqueIndex('conversations_contact').on(t.contactId),
  index('conversations_user_last').on(t.userId, t.lastMessageAt),
]);

/** The messages the per-type index holds (texts are left out): a statement reads that index only when it names this too. */
export const IN_TYPE_INDEX = "type <> 'text'";

export const messages = sqliteTable('messages', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  conversationId: integer('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
  direction: text('direction', { enum: ['inbound', 'outbound'] }).notNull(),
  type: text('type').notNull(),
  text: text('text'),
  // Outbound: the number as the client typed it.
  toNumber: text('to_number'),
  // The network's id; unique per user only (each user's number is its own namespace).
  wamid: text('wamid'),
  // pending | accepted | sent | failed | delivered | read (outbound), received (inbound)
  status: text('status').notNull(),
  statusRank: integer('status_rank').notNull().default(0),
  errorJson: text('error_json'),
  // Outbound: the wire request; inbound: the network's message object, as received.
  payloadJson: text('payload_json').notNull(),
  templateJson: text('template_json'),
  mediaJson: text('media_json'),
  locationJson: text('location_json'),
  replyTo: text('reply_to'),
  createdAt: integer('created_at').notNull(),
  statusUpdatedAt: integer('status_updated_at'),
  // Outbound: every status callback in the network's own time, oldest first, each (status, at) once, as JSON
  // [[status, at, error_json, pricing_json], …]. Kept in the row the callback rewrites anyway: a table of its own cost
  // every status callback a random index page (some 20 µs). Null = none yet.
  statusesJson: text('statuses_json'),
  // The message as the conversations answer lists it (JSON object text), rendered by every write that changes
  // the message: a listing concatenates these instead of rendering thousands of messages per request. Null = not yet.
  listedJson: text('listed_json'),
  // Outbound: api (sent through the gateway), agent (the network's AI agent) or business_app (the phone app); null = api.
  origin: text('origin'),
  // The network's pricing object from the first status that carried one.
  pricingJson: text('pricing_json'),
  // Coexistence numbers: when the sender edited it (its earlier texts stay in payload_json's history) / deleted it.
  editedAt: integer('edited_at'),
  // Earlier texts of an edited message, oldest first: [{text, at}].
  editsJson: text('edits_json'),
  revoked: integer('revoked', { mode: 'boolean' }).notNull().default(false),
  // Queued sends (status queued | scheduled): due from send_at, failed EXPIRED after expires_at; 0 = a reply, 1 = bulk.
  sendAt: integer('send_at'),
  expiresAt: integer('expires_at'),
  priority: integer('priority'),
}, (t) => [
  // Also the index behind ON DELETE CASCADE from users (user_id leads).
  uniqueIndex('messages_user_wamid').on(t.userId, t.wamid),
  // A conversation's messages by time, then id (the order of a tie). The type comes last so that a view filtered to texts
  // (most messages) finds them in this index alone, without an index of its own that every text would be written into.
  index('messages_conversation_created').on(t.conversationId, t.createdAt, t.id, t.type),
  // The conversations view filtered by any other type: its newest, its count and its latest 200, each one index range.
  // Texts are left out: one random index page less for every text stored (some 20 µs of each inbound callback or send).
  index('messages_conversation_type_created').on(t.conversationId, t.type, t.createdAt).where(sql.raw(IN_TYPE_INDEX)),
  // The send queue: each user's due messages in order, and the expiry sweep.
  index('messages_queue').on(t.userId, t.priority, t.sendAt, t.id).where(sql`status IN ('queued', 'scheduled')`),
  index('messages_queue_expiry').on(t.expiresAt).where(sql`status IN ('queued', 'scheduled') AND expires_at IS NOT NULL`),
  // A conversation's whole history paged by message id (GET …/conversations/{contact_id}/messages).
  index('messages_conversation_id').on(t.conversationId, t.id),
]);

// Durable queue of inbound media downloads, one row per message with media: enqueued in the write that stores the
// message, settled by the download worker. The file is {database}.media/{message_id} beside the database while state = stored.
export const mediaDownloads = sqliteTable('media_downloads', {
  messageId: integer('message_id').primaryKey().references(() => messages.id, { onDelete: 'cascade' }),
  state: text('state', { enum: ['pending', 'stored', 'failed'] }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  // 0 = due now: the webhook path needs no clock.
  nextAttemptAt: integer('next_attempt_at').notNull().default(0),
  // The first attempt's time: retries stop 24 h after it.
  firstAttemptAt: integer('first_attempt_at'),
  // Why the last attempt failed (pending: retried; failed: final).
  error: text('error'),
  // Stored: the file's type as served and its size.
  mimeType: text('mime_type'),
  size: integer('size'),
  settledAt: integer('settled_at'),
}, (t) => [index('media_downloads_due').on(t.nextAttemptAt).where(sql`state = 'pending'`)]);

// Statuses whose wamid is not stored yet for the user the callback was routed to (it raced the send answer).
export const orphanStatuses = sqliteTable('orphan_statuses', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  wamid: text('wamid').notNull(),
  status: text('status').notNull(),
  at: integer('at').notNull(),
  errorJson: text('error_json'),
  receivedAt: integer('received_at').notNull(),
}, (t) => [uniqueIndex('orphan_statuses_once').on(t.userId, t.wamid, t.status, t.at)]);

// Durable inbox: every accepted callback as received, before it is answered.
export const webhookEvents = sqliteTable('webhook_events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  receivedAt: integer('received_at').notNull(),
  rawBody: text('raw_body').notNull(),
  // failed: retried later; dead: failed too often, kept for an admin to replay after a fix.
  state: text('state', { enum: ['pending', 'processed', 'failed', 'dead'] }).notNull().default('pending'),
  error: text('error'),
  // Processing runs so far (the first one included); replays stop at the limit.
  attempts: integer('attempts').notNull().default(0),
  processedAt: integer('processed_at'),
  // The (first) user the callback was routed to: its raw callbacks go with it.
  userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
}, (t) => [
  index('webhook_events_state').on(t.state).where(sql`state <> 'processed'`),
  index('webhook_events_user').on(t.userId),
  // The retention sweep's range: processed callbacks by age.
  index('webhook_events_processed_received').on(t.receivedAt).where(sql`state = 'processed'`),
]);

export const idempotencyKeys = sqliteTable('idempotency_keys', {
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  key: text('key').notNull(),
  requestHash: text('request_hash').notNull(),
  // Null while the first request is still in flight.
  responseStatus: integer('response_status'),
  responseBody: text('response_body'),
  createdAt: integer('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.key] }), index('idempotency_keys_created').on(t.createdAt)]);

// Sessions ended by logout before their JWT expires; a row can go once `expires_at` is past.
export const revokedSessions = sqliteTable('revoked_sessions', {
  jti: text('jti').primaryKey(),
  expiresAt: integer('expires_at').notNull(),
}, (t) => [index('revoked_sessions_expires').on(t.expiresAt)]);

// The event log (one per user): `seq` numbers a user's events 1, 2, 3 … with no gap, taken from event_counters in the
// transaction of the change. Rows hold references only: the message and contact are rendered when the event is read.
export const events = sqliteTable('events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  seq: integer('seq').notNull(),
  type: text('type').notNull(),
  messageId: integer('message_id'),
  // contact.updated: the contact it reports (message events reach theirs through the message's conversation).
  contactId: integer('contact_id'),
  // message.status: the status this event recorded.
  status: text('status'),
  createdAt: integer('created_at').notNull(),
}, (t) => [uniqueIndex('events_user_seq').on(t.userId, t.seq)]);

// Each user's last event number: never reset by retention, so numbers never repeat.
export const eventCounters = sqliteTable('event_counters', {
  userId: integer('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  lastSeq: integer('last_seq').notNull(),
});

// API keys: only the SHA-256 of the key is kept, with its last 4 characters to tell keys apart.
export const apiKeys = sqliteTable('api_keys', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  hash: text('hash').notNull().unique(),
  last4: text('last4').notNull(),
  createdAt: integer('created_at').notNull(),
  lastUsedAt: integer('last_used_at'),
}, (t) => [index('api_keys_user').on(t.userId)]);

// Event endpoints: where a user's events are delivered (Standard Webhooks), with the delivery's durable state.
export const eventEndpoints = sqliteTable('event_endpoints', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  description: text('description'),
  // JSON array of event types; null = every type.
  typesJson: text('types_json'),
  // whsec_… sealed with the token cipher.
  secretSealed: text('secret_sealed').notNull(),
  state: text('state', { enum: ['enabled', 'disabled'] }).notNull().default('enabled'),
  disabledReason: text('disabled_reason'),
  // The last event seq delivered (or skipped as not wanted).
  cursor: integer('cursor').notNull().default(0),
  // The batch in flight: its webhook-id and last seq stay the same across its retries.
  batchId: text('batch_id'),
  batchLast: integer('batch_last'),
  // Refusals (4xx) of the batch's single event so far; 3 parks it.
  refusals: integer('refusals').notNull().default(0),
  failures: integer('failures').notNull().default(0),
  failingSince: integer('failing_since'),
  nextAttemptAt: integer('next_attempt_at').notNull().default(0),
  lastAttemptAt: integer('last_attempt_at'),
  lastStatus: integer('last_status'),
  lastDurationMs: integer('last_duration_ms'),
  lastError: text('last_error'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('event_endpoints_user').on(t.userId)]);

// Events an endpoint refused 3 times: set aside so the rest keep flowing; retried on request.
export const eventParked = sqliteTable('event_parked', {
  endpointId: integer('endpoint_id').notNull().references(() => eventEndpoints.id, { onDelete: 'cascade' }),
  seq: integer('seq').notNull(),
  lastStatus: integer('last_status'),
  parkedAt: integer('parked_at').notNull(),
}, (t) => [primaryKey({ columns: [t.endpointId, t.seq] })]);

// Who changed what (the console and the API's administrative calls): never a secret in `details`. The target is kept
// by id and e-mail without a foreign key, so the record of a deletion outlives the user.
export const auditLog = sqliteTable('audit_log', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  at: integer('at').notNull(),
  actorUserId: integer('actor_user_id'),
  actorEmail: text('actor_email'),
  action: text('action').notNull(),
  targetUserId: integer('target_user_id'),
  targetEmail: text('target_email'),
  // JSON object text: changed field names and non-secret values.
  detailsJson: text('details_json').notNull().default('{}'),
  clientIp: text('client_ip'),
}, (t) => [index('audit_log_target').on(t.targetUserId)]);

export type UserRow = typeof users.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type ContactRow = typeof contacts.$inferSelect;
