// Event endpoint rows -> the API's endpoint object (never the secret).
import type { Static } from '@sinclair/typebox';
import type { Endpoint } from '../../schemas/events';
import type { EndpointRow, ParkedRow } from '../db/event-endpoints-repo';
import { isoUtc } from '../support/iso-utc';

export function endpointView(row: EndpointRow, lastSeq: number, parked: ParkedRow[]): Static<typeof Endpoint> {
  return {
    id: row.id, url: row.url, description: row.description, types: row.typesJson === null ? null : JSON.parse(row.typesJson) as string[],
    state: row.state, disabled_reason: row.disabledReason, cursor: row.cursor, lag: Math.max(0, lastSeq - row.cursor), failures: row.failures,
    next_attempt_at: row.state === 'enabled' && row.nextAttemptAt > 0 ? isoUtc(row.nextAttemptAt) : null,
    last_attempt: row.lastAttemptAt === null ? null : {
      at: isoUtc(row.lastAttemptAt), status: row.lastStatus, duration_ms: row.lastDurationMs ?? 0, error: row.lastError,
    },
    parked: parked.map((p) => ({ event_id: p.seq, last_status: p.lastStatus, parked_at: isoUtc(p.parkedAt) })),
    created_at: isoUtc(row.createdAt), updated_at: isoUtc(row.updatedAt),
  };
}
