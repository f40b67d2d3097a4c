// A stored webhook event as administrators see it: times as ISO strings, the raw body's size instead of the body.
import type { Static } from '@sinclair/typebox';
import type { WebhookEvent } from '../../schemas/webhook';
import type { EventSummary } from '../db/webhook-events-repo';
import { isoUtc } from '../support/iso-utc';

export const webhookEventJson = (event: EventSummary): Static<typeof WebhookEvent> => ({
  id: event.id,
  state: event.state,
  attempts: event.attempts,
  received_at: isoUtc(event.receivedAt),
  processed_at: event.processedAt === null ? null : isoUtc(event.processedAt),
  error: event.error,
  raw_bytes: event.rawBytes,
});
