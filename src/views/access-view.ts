// Page models of a user's API access and queue: API keys, event endpoints (lag, last attempt, parked events) and the
// messages waiting in the send queue, as the /inbox access page, a user's page and the operations page show them.
import type { Static } from '@sinclair/typebox';
import type { Endpoint } from '../../schemas/events';
import type { ApiKeyRow } from '../db/api-keys-repo';
import type { WaitingMessage } from '../db/queue-repo';
import { when } from './console-view';

export function keyRow(key: ApiKeyRow, now: Date, zone: string) {
  return {
    id: key.id, name: key.name, last4: key.last4, created: when(key.createdAt, now, zone),
    lastUsed: key.lastUsedAt === null ? null : when(key.lastUsedAt, now, zone),
  };
}

const STATE_TEXT: Record<string, string> = { enabled: 'delivering', disabled: 'disabled' };

/** The endpoint object of the API, with its times readable and its lag and last attempt in words. */
export function endpointRow(endpoint: Static<typeof Endpoint>, now: Date, zone: string) {
  const at = (iso: string) => when(Date.parse(iso), now, zone);
  const last = endpoint.last_attempt;
  return {
    ...endpoint,
    stateText: STATE_TEXT[endpoint.state] ?? endpoint.state,
    lagText: endpoint.lag === 0 ? 'up to date' : `${endpoint.lag} ${endpoint.lag === 1 ? 'event' : 'events'} behind`,
    lastAttempt: last === null ? null : {
      when: at(last.at), ok: last.status !== null && last.status >= 200 && last.status < 300,
      text: `${last.status === null ? (last.error ?? 'no answer') : `HTTP ${last.status}`} in ${last.duration_ms} ms`,
    },
    nextAttempt: endpoint.next_attempt_at === null || endpoint.lag === 0 ? null : at(endpoint.next_attempt_at),
    parkedRows: endpoint.parked.map((p) => ({ ...p, parked: at(p.parked_at), statusText: p.last_status === null ? 'no answer' : `HTTP ${p.last_status}` })),
  };
}

export function waitingRow(message: WaitingMessage, now: Date, zone: string) {
  return {
    id: message.id, to: message.to, status: message.status, queued: when(message.createdAt, now, zone), due: when(message.sendAt, now, zone),
    expires: message.expiresAt === null ? null : when(message.expiresAt, now, zone),
  };
}
