// The request bodies of the benchmark, made in the load generator: signed callbacks of realistic size (about 1.5 KB),
// sends, and the 3 MB non-ASCII callback with a wrong signature.
import { createHmac } from 'node:crypto';
import { MESSAGING_PRODUCT } from '../schemas/network';
import { inboundPayload, inboundTextPayload, statusCallbackPayload } from '../src/sandbox/envelopes';

/** What the bodies name: the seeded account, its outbound wamids, contacts and an uploaded image. */
export interface BodyData { phoneNumberId: string; wamids: string[]; contacts: number; image: { id: string; sha256: string } }
export type BodyKind = 'status' | 'inbound' | 'inbound-media' | 'send' | 'wire' | 'big-unsigned';

export const sign = (body: Buffer, secret: string): string => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');

// A sentence to cut texts from: the texts differ per callback and stay realistic.
const WORDS = ('Hello, thanks for getting back to me so quickly. I wanted to confirm the delivery window for order 4471 and ask '
  + 'whether the second parcel can go to my office address instead; the reception is open from nine to five and someone '
  + 'will sign for it. Also, the invoice shows the old VAT number, could you send a corrected one? Kind regards and have a '
  + 'great weekend. ').repeat(4);
/** Echoed by the network on every status of a send that set it: a tracking blob of a few hundred bytes is common. */
const OPAQUE = JSON.stringify({ campaign: 'autumn-restock-2026', segment: 'returning-customers-eu', template: 'order_update_v3',
  trace: 'f'.repeat(64), tags: ['bench', 'status', 'tracking'], note: WORDS.slice(0, 420) });

const STATUS_STEPS = ['sent', 'delivered', 'read'] as const;
let n = 0;
/** Status callbacks made so far for each server (`to`): each database sees the same sequence from its start. */
const statusesMade = new Map<string, number>();
function nextStatus(to: string): number {
  const i = statusesMade.get(to) ?? 0;
  statusesMade.set(to, i + 1);
  return i;
}

/**
 * The next body of `kind` (callbacks name a new wamid, or the next known one) for the server `to`: status callbacks
 * follow a sequence of their own per server, since what one changes depends on what that server's database saw before.
 */
export function makeBody(kind: BodyKind, data: BodyData, to = ''): Buffer {
  const i = kind === 'status' ? nextStatus(to) : n++;
  const contact = String(15550000000 + (i % data.contacts));
  const now = Math.floor(Date.now() / 1000);
  switch (kind) {
    case 'status': {
      // Each known wamid goes sent, then delivered, then read, as a real message does; after that the network repeats
      // itself (the same status at the same time, which changes nothing).
      const pass = Math.floor(i / data.wamids.length);
      const step = pass % STATUS_STEPS.length;
      const at = 1_700_000_000 + STATUS_STEPS.length * (i % data.wamids.length) + step;
      return Buffer.from(JSON.stringify(statusCallbackPayload(data.phoneNumberId, {
        wamid: data.wamids[i % data.wamids.length]!, status: STATUS_STEPS[step]!, recipient: contact,
        timestamp: at, bizOpaqueCallbackData: OPAQUE,
      })));
    }
    case 'inbound': {
      const start = i % 300;
      return Buffer.from(JSON.stringify(inboundTextPayload(data.phoneNumberId, {
        wamid: `wamid.benchin${process.pid}.${i}`, from: contact, name: 'Bench Contact', timestamp: now,
        text: `#${i} ${WORDS.slice(start, start + 760)}`,
      })));
    }
    case 'inbound-media':
      return Buffer.from(JSON.stringify(inboundPayload(data.phoneNumberId, {
        wamid: `wamid.benchmedia${process.pid}.${i}`, from: contact, name: 'Bench Contact', timestamp: now,
        media: { type: 'image', id: data.image.id, mime_type: 'image/jpeg', sha256: data.image.sha256, caption: `photo ${i}` },
      })));
    case 'send':
      return Buffer.from(JSON.stringify({ to: contact, type: 'text', text: { body: `bench ${i}` } }));
    case 'wire':
      return Buffer.from(JSON.stringify({ messaging_product: MESSAGING_PRODUCT, recipient_type: 'individual', to: contact, type: 'text', text: { body: `bench ${i}` } }));
    case 'big-unsigned':
      return bigBody();
  }
}

let big: Buffer | undefined;
/** A callback just under the 3 MB limit whose text is non-ASCII (2 and 3 bytes per character): the costliest body to check. */
function bigBody(): Buffer {
  if (big) return big;
  const size = 3 * 1024 * 1024 - 64;
  const head = '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"messages":[{"type":"text","text":{"body":"';
  const tail = '"}}]},"field":"messages"}]}]}';
  const filler = 'Grüße aus Köln, 東京からこんにちは — ';
  let text = filler.repeat(Math.ceil(size / Buffer.byteLength(filler)));
  while (Buffer.byteLength(head + text + tail) > size) text = text.slice(0, -1);
  big = Buffer.from(head + text.padEnd(text.length + size - Buffer.byteLength(head + text + tail), ' ') + tail);
  return big;
}
