// The sandbox's media endpoints, as the network's: multipart upload, lookup (a URL that needs the token), download, delete.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { MESSAGING_PRODUCT, type NetworkMediaInfo } from '../../schemas/network';
import type { InboundMessage } from '../../schemas/sandbox';
import type { InboundMedia } from './envelopes';
import { reply } from './http';
import { errorAnswer, freshMediaId, type SandboxRefusal } from './wire';

/** What the sandbox does with the next lookup or download (FIFO per stage); with none queued it answers. */
export interface MediaBehaviour {
  stage: 'lookup' | 'download'; delayMs?: number; fail?: SandboxRefusal;
  /** The refusal's Retry-After header, as sent: delta-seconds or an HTTP date. */
  retryAfter?: string;
}

export interface StoredMedia { id: string; phoneNumberId: string; bytes: Buffer; mimeType: string; sha256: string; filename?: string; key: string }

/** The network's upload limits by MIME type (its kind follows from the type: webp is a sticker). */
const KiB = 1024;
const MiB = 1024 * KiB;
const LIMITS: Record<string, number> = {
  'image/jpeg': 5 * MiB, 'image/png': 5 * MiB, 'image/webp': 500 * KiB,
  'audio/aac': 16 * MiB, 'audio/amr': 16 * MiB, 'audio/mpeg': 16 * MiB, 'audio/mp4': 16 * MiB, 'audio/ogg': 16 * MiB,
  'video/mp4': 16 * MiB, 'video/3gpp': 16 * MiB, 'video/3gp': 16 * MiB,
  'text/plain': 100 * MiB, 'application/pdf': 100 * MiB, 'application/msword': 100 * MiB, 'application/vnd.ms-excel': 100 * MiB,
  'application/vnd.ms-powerpoint': 100 * MiB,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 100 * MiB,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 100 * MiB,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 100 * MiB,
};

const baseType = (mime: string): string => mime.split(';')[0]!.trim().toLowerCase();
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function createMediaStore(closing?: AbortSignal) {
  const media = new Map<string, StoredMedia>();
  const behaviours: MediaBehaviour[] = [];
  /** Takes the next behaviour queued for `stage`, waits its delay; true when it answered (a refusal). */
  async function behave(stage: MediaBehaviour['stage'], response: ServerResponse): Promise<boolean> {
    const at = behaviours.findIndex((b) => b.stage === stage);
    if (at === -1) return false;
    const [behaviour] = behaviours.splice(at, 1);
    if (behaviour!.delayMs) await sleep(behaviour!.delayMs, undefined, { signal: closing }).catch(() => undefined);
    if (behaviour!.fail === undefined) return response.destroyed;
    refuse(response, behaviour!.fail, undefined, behaviour!.retryAfter === undefined ? {} : { 'retry-after': behaviour!.retryAfter });
    return true;
  }
  const refuse = (response: ServerResponse, name: SandboxRefusal, details?: string, headers?: Record<string, string>) => {
    const answer = errorAnswer(name, details);
    reply(response, answer.status, answer.body, headers);
  };

  /** Keeps a file for `phoneNumberId` (an upload, or an inbound message's attachment); `null` names what is wrong. */
  function add(phoneNumberId: string, bytes: Buffer, mimeType: string, filename?: string): StoredMedia | string {
    const limit = LIMITS[baseType(mimeType)];
    if (limit === undefined) return `type: ${JSON.stringify(mimeType)} is not a supported media type`;
    if (bytes.length === 0) return 'file: the file is empty';
    if (bytes.length > limit) return `file: ${bytes.length} bytes, over the ${limit} bytes limit of ${baseType(mimeType)}`;
    const item: StoredMedia = {
      id: freshMediaId(), phoneNumberId, bytes, mimeType, filename,
      sha256: createHash('sha256').update(bytes).digest('hex'), key: randomBytes(16).toString('hex'),
    };
    media.set(item.id, item);
    return item;
  }

  return {
    add,
    get: (id: string) => media.get(id),
    clear: () => {
      media.clear();
      behaviours.length = 0;
    },
    /** Queues behaviours for the next lookups and downloads (a delay, a refusal such as server_error, throttled or unknown_object). */
    enqueue: (...queued: MediaBehaviour[]) => void behaviours.push(...queued),

    /** `POST /{phone_number_id}/media`: multipart with `file`, `type` and `messaging_product` (form or query). */
    async upload(response: ServerResponse, phoneNumberId: string, contentType: string, raw: Buffer, query: URLSearchParams): Promise<void> {
      if (!/^multipart\/form-data\b/i.test(contentType)) return refuse(response, 'invalid_parameter', 'body: expected multipart/form-data');
      let form: FormData;
      try {
        form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
      } catch {
        return refuse(response, 'invalid_parameter', 'body: malformed multipart/form-data');
      }
      const product = form.get('messaging_product') ?? query.get('messaging_product');
      if (product !== MESSAGING_PRODUCT) return refuse(response, 'invalid_parameter', `messaging_product: expected "${MESSAGING_PRODUCT}"`);
      const file = form.get('file');
      if (file === null || typeof file === 'string') return refuse(response, 'invalid_parameter', 'file: a file part is required');
      const declared = form.get('type');
      const mimeType = typeof declared === 'string' && declared !== '' ? declared : file.type;
      if (!mimeType) return refuse(response, 'invalid_parameter', 'type: the MIME type is required (type field or the part\'s Content-Type)');
      const added = add(phoneNumberId, Buffer.from(await file.arrayBuffer()), mimeType, file.name || undefined);
      if (typeof added === 'string') return refuse(response, 'media_upload', added);
      reply(response, 200, { id: added.id });
    },

    /** `GET /{media_id}`: where to download it, for the account it belongs to. */
    async retrieve(response: ServerResponse, phoneNumberId: string, id: string, baseUrl: string): Promise<void> {
      if (await behave('lookup', response)) return;
      const item = media.get(id);
      if (!item || item.phoneNumberId !== phoneNumberId) return refuse(response, 'unknown_object');
      const info: NetworkMediaInfo = {
        messaging_product: MESSAGING_PRODUCT, url: `${baseUrl}/_media/${item.id}?key=${item.key}`,
        mime_type: item.mimeType, sha256: item.sha256, file_size: item.bytes.length, id: item.id,
      };
      reply(response, 200, info);
    },

    /** The attachment of an injected inbound message: uploaded media of this number, or new media from base64. */
    attach(phoneNumberId: string, spec: NonNullable<InboundMessage['media']>): InboundMedia | string {
      let item;
      if (spec.id !== undefined) {
        item = media.get(spec.id);
        if (!item || item.phoneNumberId !== phoneNumberId) return `media.id: no media ${spec.id} for phone number id ${phoneNumberId}`;
      } else {
        if (spec.data === undefined || spec.mime_type === undefined) return 'media: give an uploaded id, or data (base64) with mime_type';
        const added = add(phoneNumberId, Buffer.from(spec.data, 'base64'), spec.mime_type, spec.filename);
        if (typeof added === 'string') return `media.${added}`;
        item = added;
      }
      const filename = spec.filename ?? item.filename;
      return {
        type: spec.type, id: item.id, mime_type: spec.mime_type ?? item.mimeType, sha256: Buffer.from(item.sha256, 'hex').toString('base64'),
        ...(spec.caption === undefined || spec.type === 'audio' || spec.type === 'sticker' ? {} : { caption: spec.caption }),
        ...(spec.type === 'document' && filename !== undefined ? { filename } : {}),
      };
    },

    /** `DELETE /{media_id}`. */
    remove(response: ServerResponse, phoneNumberId: string, id: string): void {
      const item = media.get(id);
      if (!item || item.phoneNumberId !== phoneNumberId) return refuse(response, 'unknown_object');
      media.delete(id);
      reply(response, 200, { success: true });
    },

    /** The URL a lookup returned: the bytes, only with the owning account's Bearer token. */
    async download(request: IncomingMessage, response: ServerResponse, id: string, key: string, tokenAccount: string | undefined): Promise<void> {
      const item = media.get(id);
      if (!item || !sameText(key, item.key)) return refuse(response, 'unknown_object');
      if (tokenAccount !== item.phoneNumberId) return refuse(response, 'bad_token');
      if (await behave('download', response)) return;
      if (response.destroyed) return;
      response.writeHead(200, { 'content-type': item.mimeType, 'content-length': String(item.bytes.length) });
      response.end(request.method === 'HEAD' ? undefined : item.bytes);
    },
  };
}
export type MediaStore = ReturnType<typeof createMediaStore>;
