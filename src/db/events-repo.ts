// The event log: appendEvent (called by every write that changes what a user sees, in that write's transaction) numbers
// each user's events 1, 2, 3 … from a counter row, and the reads of the feed, the stream and the deliveries.
import type Database from 'better-sqlite3';
import type { DB } from './client';

export const EVENT_TYPES = ['message.received', 'message.sent', 'message.status', 'message.media', 'message.edited', 'contact.updated'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One stored event with what its view needs: the message's listed JSON and its contact as they stand now. */
export interface StoredEvent {
  seq: number; type: EventType; status: string | null; createdAt: number; messageJson: string | null;
  /** The contact (null: neither the message nor the contact is kept any more). */
  contactId: number | null; contactWaId: string | null; contactBsuid: string | null; contactUsername: string | null; contactName: string | null;
}

export interface EventLog {
  /** Appends one event for the message's user (call inside the write that made the change); `userId` saves looking it up. */
  append(type: EventType, messageId: number, status?: string | null, userId?: number): void;
  /** Appends one event about a contact of the user, with no message (contact.updated; call inside the write). */
  appendContact(type: EventType, userId: number, contactId: number): void;
  /** Users given events since the last call (the notifier wakes their readers once the write committed). */
  takeTouched(): number[];
  /** The clock of `created_at` (the app's own, so retention and tests agree). */
  setClock(now: () => Date): void;
  /** Events appended since start (metrics; rolled-back ones included). */
  written(): number;
  /** The user's last number so far (0: none yet). */
  lastSeq(userId: number): number;
}

const logs = new WeakMap<Database.Database, EventLog>();

/** The one event log of a connection: every repository that appends shares its statements and its set of touched users. */
export function eventLogOf(client: Database.Database): EventLog {
  const known = logs.get(client);
  if (known) return known;
  // The next number, taken in the transaction of the change: a rolled-back change gives its number back. Counted, then
  // read back (no RETURNING: its rows go through a temporary table, a few µs more on every event).
  const bump = client.prepare<[number]>(`INSERT INTO event_counters (user_id, last_seq) VALUES (?, 1)
    ON CONFLICT (user_id) DO UPDATE SET last_seq = last_seq + 1`);
  const last = client.prepare<[number], number>('SELECT last_seq FROM event_counters WHERE user_id = ?').pluck();
  const lastSeq = (userId: number): number => last.get(userId) ?? 0;
  const ownerOf = client.prepare<[number], number>('SELECT user_id FROM messages WHERE id = ?').pluck();
  const nextOf = (userId: number): number => {
    bump.run(userId);
    return lastSeq(userId);
  };
  const insert = client.prepare<[number, number, string, number | null, number | null, string | null, number]>(
    'INSERT INTO events (user_id, seq, type, message_id, contact_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  let touched = new Set<number>();
  let clock = () => new Date();
  let written = 0;
  const log: EventLog = {
    append(type, messageId, status = null, userId) {
      const owner = userId ?? ownerOf.get(messageId);
      if (owner === undefined) return;
      insert.run(owner, nextOf(owner), type, messageId, null, status, clock().getTime());
      touched.add(owner);
      written += 1;
    },
    appendContact(type, userId, contactId) {
      const seq = nextOf(userId);
      insert.run(userId, seq, type, null, contactId, null, clock().getTime());
      touched.add(userId);
      written += 1;
    },
    written: () => written,
    lastSeq,
    takeTouched() {
      if (touched.size === 0) return [];
      const users = [...touched];
      touched = new Set();
      return users;
    },
    setClock(now) {
      clock = now;
    },
  };
  logs.set(client, log);
  return log;
}

export function createEventsRepo(db: DB) {
  const client = db.$client;
  // The contact as the listing shows it: the event's own (contact.updated), else the contact of the message's
  // conversation; a conversation written without a contact (a raw insert) shows what it was keyed and named by.
  const SELECT = `SELECT e.seq, e.type, e.status, e.created_at AS createdAt, m.listed_json AS messageJson,
      coalesce(c.id, v.id) AS contactId, CASE WHEN c.id IS NULL THEN v.contact_wa_id ELSE c.wa_id END AS contactWaId,
      c.bsuid AS contactBsuid, c.username AS contactUsername, CASE WHEN c.id IS NULL THEN v.contact_name ELSE c.name END AS contactName
    FROM events e LEFT JOIN messages m ON m.id = e.message_id LEFT JOIN conversations v ON v.id = m.conversation_id
      LEFT JOIN contacts c ON c.id = coalesce(e.contact_id, v.contact_id)`;
  const page = client.prepare<[number, number, number], StoredEvent>(`${SELECT} WHERE e.user_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`);
  const pageOfTypes = client.prepare<[number, number, string, number], StoredEvent>(
    `${SELECT} WHERE e.user_id = ? AND e.seq > ? AND e.type IN (SELECT value FROM json_each(?)) ORDER BY e.seq LIMIT ?`);
  const one = client.prepare<[number, number], StoredEvent>(`${SELECT} WHERE e.user_id = ? AND e.seq = ?`);
  const oldest = client.prepare<[number], number | null>('SELECT min(seq) FROM events WHERE user_id = ?').pluck();
  // Along the ids, with no index of created_at (one index less to write per event): ids grow with created_at, so the
  // aged events are the oldest ids. A batch looks at the `limit` oldest events and deletes those created before the
  // cut; one not aged yet (the clock went back) ends the sweep, and what is behind it goes once it has aged too.
  const deleteBefore = client.prepare<[number, number]>(
    'DELETE FROM events WHERE id IN (SELECT id FROM (SELECT id, created_at FROM events ORDER BY id LIMIT ?) WHERE created_at < ?)');

  return {
    /** Events with seq > `after`, oldest first, at most `limit`; only the given types when `types` is set. */
    after(userId: number, after: number, limit: number, types?: readonly string[]): StoredEvent[] {
      return types === undefined ? page.all(userId, after, limit) : pageOfTypes.all(userId, after, JSON.stringify(types), limit);
    },
    /** One event of the user by its number. */
    bySeq: (userId: number, seq: number): StoredEvent | undefined => one.get(userId, seq),
    /** The oldest number retention kept (null: none kept). */
    oldestSeq: (userId: number): number | null => oldest.get(userId) ?? null,
    /** The user's last number so far (0: none yet). */
    lastSeq: (userId: number): number => eventLogOf(client).lastSeq(userId),
    writtenSinceStart: (): number => eventLogOf(client).written(),
    /** Retention: deletes up to `limit` events created before `before` (ms); how many went. Call inside a write. */
    deleteBefore: (before: number, limit: number): number => deleteBefore.run(limit, before).changes,
  };
}
export type EventsRepo = ReturnType<typeof createEventsRepo>;
