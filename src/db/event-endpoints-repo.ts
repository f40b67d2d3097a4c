// Event endpoints and their durable delivery state: cursor, the batch in flight (its webhook-id and last event),
// failures and backoff, the last attempt, and the events parked after 3 refusals.
import type { DB } from './client';

export interface EndpointRow {
  id: number; userId: number; url: string; description: string | null; typesJson: string | null; secretSealed: string;
  state: 'enabled' | 'disabled'; disabledReason: string | null; cursor: number; batchId: string | null; batchLast: number | null;
  refusals: number; failures: number; failingSince: number | null; nextAttemptAt: number;
  lastAttemptAt: number | null; lastStatus: number | null; lastDurationMs: number | null; lastError: string | null;
  createdAt: number; updatedAt: number;
}
export interface ParkedRow { seq: number; lastStatus: number | null; parkedAt: number }
export interface NewEndpoint { userId: number; url: string; description: string | null; typesJson: string | null; secretSealed: string }
export type EndpointChanges = Partial<Pick<EndpointRow, 'url' | 'description' | 'typesJson'>> & { enabled?: boolean };
/** What one attempt changed: the columns it sets (the deliverer decides them). */
export type AttemptOutcome = Partial<Omit<EndpointRow, 'id' | 'userId' | 'url' | 'description' | 'typesJson' | 'secretSealed' | 'createdAt'>>;

const COLUMNS = `id, user_id AS userId, url, description, types_json AS typesJson, secret_sealed AS secretSealed, state,
  disabled_reason AS disabledReason, cursor, batch_id AS batchId, batch_last AS batchLast, refusals, failures,
  failing_since AS failingSince, next_attempt_at AS nextAttemptAt, last_attempt_at AS lastAttemptAt, last_status AS lastStatus,
  last_duration_ms AS lastDurationMs, last_error AS lastError, created_at AS createdAt, updated_at AS updatedAt`;
const SNAKE: Record<string, string> = {
  state: 'state', disabledReason: 'disabled_reason', cursor: 'cursor', batchId: 'batch_id', batchLast: 'batch_last', refusals: 'refusals',
  failures: 'failures', failingSince: 'failing_since', nextAttemptAt: 'next_attempt_at', lastAttemptAt: 'last_attempt_at',
  lastStatus: 'last_status', lastDurationMs: 'last_duration_ms', lastError: 'last_error', updatedAt: 'updated_at',
  url: 'url', description: 'description', typesJson: 'types_json',
};

export function createEventEndpointsRepo(db: DB) {
  const client = db.$client;
  const count = client.prepare<[number], number>('SELECT count(*) FROM event_endpoints WHERE user_id = ?').pluck();
  const insert = client.prepare<[number, string, string | null, string | null, string, number, number, number], EndpointRow>(`INSERT INTO
    event_endpoints (user_id, url, description, types_json, secret_sealed, cursor, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`);
  const lastSeq = client.prepare<[number], number>('SELECT coalesce(max(last_seq), 0) FROM event_counters WHERE user_id = ?').pluck();
  const byId = client.prepare<[number], EndpointRow>(`SELECT ${COLUMNS} FROM event_endpoints WHERE id = ?`);
  const ofUser = client.prepare<[number], EndpointRow>(`SELECT ${COLUMNS} FROM event_endpoints WHERE user_id = ? ORDER BY id`);
  const every = client.prepare<[number], EndpointRow>(`SELECT ${COLUMNS} FROM event_endpoints ORDER BY user_id, id LIMIT ?`);
  const due = client.prepare<[number], EndpointRow>(`SELECT ${COLUMNS} FROM event_endpoints
    WHERE state = 'enabled' AND next_attempt_at <= ? ORDER BY next_attempt_at, id`);
  const remove = client.prepare<[number]>('DELETE FROM event_endpoints WHERE id = ?');
  const park = client.prepare<[number, number, number | null, number]>(
    'INSERT OR REPLACE INTO event_parked (endpoint_id, seq, last_status, parked_at) VALUES (?, ?, ?, ?)');
  const parked = client.prepare<[number], ParkedRow>(
    'SELECT seq, last_status AS lastStatus, parked_at AS parkedAt FROM event_parked WHERE endpoint_id = ? ORDER BY seq');
  const lags = client.prepare<[], number>(`SELECT max(0, coalesce(c.last_seq, 0) - e.cursor) FROM event_endpoints e
    LEFT JOIN event_counters c ON c.user_id = e.user_id`).pluck();
  const unpark = client.prepare<[number, number]>('DELETE FROM event_parked WHERE endpoint_id = ? AND seq = ?');

  const updates = new Map<string, ReturnType<typeof client.prepare>>();
  function set(id: number, changes: Record<string, unknown>): EndpointRow | undefined {
    const keys = Object.keys(changes).filter((key) => SNAKE[key] !== undefined);
    if (keys.length > 0) {
      const sql = `UPDATE event_endpoints SET ${keys.map((k) => `${SNAKE[k]} = @${k}`).join(', ')} WHERE id = @id`;
      let statement = updates.get(sql);
      if (!statement) updates.set(sql, (statement = client.prepare(sql)));
      statement.run({ ...Object.fromEntries(keys.map((k) => [k, changes[k]])), id });
    }
    return byId.get(id);
  }

  return {
    /** A new endpoint starting after the user's latest event (nothing older is sent); null beyond `max`. Call inside a write. */
    create(fields: NewEndpoint, now: number, max: number): EndpointRow | null {
      if (count.get(fields.userId)! >= max) return null;
      return insert.get(fields.userId, fields.url, fields.description, fields.typesJson, fields.secretSealed, lastSeq.get(fields.userId)!, now, now)!;
    },
    byId: (id: number): EndpointRow | undefined => byId.get(id),
    ofUser: (userId: number): EndpointRow[] => ofUser.all(userId),
    /** Every user's endpoints (at most `limit`), by user then id: the operations page. */
    all: (limit: number): EndpointRow[] => every.all(limit),
    /** Enabled endpoints whose next attempt is due at `now`. */
    due: (now: number): EndpointRow[] => due.all(now),
    /** Edits; `enabled: true` re-enables from the cursor with the failures forgotten. Call inside a write. */
    update(id: number, changes: EndpointChanges, now: number): EndpointRow | undefined {
      const { enabled, ...rest } = changes;
      const state = enabled === undefined ? {}
        : enabled ? { state: 'enabled', disabledReason: null, failures: 0, failingSince: null, nextAttemptAt: 0, refusals: 0 }
          : { state: 'disabled', disabledReason: 'disabled by the user' };
      return set(id, { ...rest, ...state, updatedAt: now });
    },
    /** Records one attempt's outcome. Call inside a write. */
    settle: (id: number, outcome: AttemptOutcome): EndpointRow | undefined => set(id, outcome),
    /** Sets an event aside after its refusals and moves the cursor past it. Call inside a write. */
    park(id: number, seq: number, status: number | null, now: number): void {
      park.run(id, seq, status, now);
      set(id, { cursor: seq, batchId: null, batchLast: null, refusals: 0, nextAttemptAt: 0 });
    },
    parked: (id: number): ParkedRow[] => parked.all(id),
    unpark: (id: number, seq: number): boolean => unpark.run(id, seq).changes > 0,
    /** Each endpoint's lag: events written after its cursor (metrics). */
    lags: (): number[] => lags.all(),
    remove: (id: number): boolean => remove.run(id).changes > 0,
  };
}
export type EventEndpointsRepo = ReturnType<typeof createEventEndpointsRepo>;
