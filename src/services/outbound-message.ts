// API send bodies -> the message to send (the checks a schema cannot express), and a message -> its stored row fields.
import type { NetworkTemplate, SendBody, SendTemplateBody } from '../../schemas/messages';
import { LIST_ROWS_MAX } from '../../schemas/network';
import { AppError } from '../errors';
import type { OutboundMessage } from '../messaging/client';
import { addressOf, type Recipient } from './send-recipient';

const invalid = (message: string) => new AppError(400, 'VALIDATION_ERROR', message);

/** The same object with its keys sorted at every level: equal messages get equal idempotency fingerprints. */
function canonical<T>(value: T): T {
  if (Array.isArray(value)) return value.map(canonical) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])) as T;
}

/** POST /api/message/send: the body without `token`, checked for what one schema cannot say. */
export function freeFormMessage(body: SendBody, recipient: Recipient): OutboundMessage {
  if (body.type === 'template') return networkTemplateMessage(body.template, recipient);
  const replyTo = body.context === undefined ? {} : { replyTo: body.context.message_id };
  if (body.type === 'text') {
    const previewUrl = body.text.preview_url === undefined ? {} : { previewUrl: body.text.preview_url };
    return { kind: 'text', ...addressOf(recipient), body: body.text.body, ...previewUrl, ...replyTo };
  }
  if (body.type === 'interactive' && body.interactive.type === 'list') {
    const rows = body.interactive.action.sections.reduce((n, section) => n + section.rows.length, 0);
    if (rows > LIST_ROWS_MAX) {
      throw invalid(`body/interactive/action/sections has ${rows} rows; at most ${LIST_ROWS_MAX} in all sections together`);
    }
  }
  const content = canonical((body as unknown as Record<string, unknown>)[body.type]);
  return { kind: body.type, ...addressOf(recipient), content, ...replyTo } as OutboundMessage;
}

/** POST /api/message/send2: params without gaps; each button at its explicit index or its position in the list, no two alike. */
export function templateMessage(body: SendTemplateBody, recipient: Recipient): OutboundMessage {
  const { template_name: name, language, header, buttons } = body;
  const given = [body.param1, body.param2, body.param3, body.param4, body.param5];
  const gap = given.findIndex((p, i) => p !== undefined && given[i - 1] === undefined && i > 0);
  if (gap !== -1) throw invalid(`body/param${gap} is required when param${gap + 1} is given (no gaps)`);
  const params = given.filter((p): p is string => p !== undefined);
  const message: Extract<OutboundMessage, { kind: 'template' }> = { kind: 'template', ...addressOf(recipient), name, language, params };
  if (header !== undefined) message.header = canonical(header);
  if (buttons !== undefined) {
    const taken = new Set<number>();
    message.buttons = buttons.map((button, position) => {
      const index = button.index ?? position;
      if (taken.has(index)) throw invalid(`body/buttons/${position}/index: position ${index} is already taken by another button`);
      taken.add(index);
      return button.sub_type === 'quick_reply'
        ? { sub_type: button.sub_type, payload: button.payload, index }
        : { sub_type: button.sub_type, text: button.text, index };
    });
  }
  return message;
}

/**
 * POST /api/message/send with `type: "template"`: the network's template object sent as given. Listed like a send2
 * template: its body parameters' texts (or fallback values) in order are its `params`.
 */
function networkTemplateMessage(template: NetworkTemplate, recipient: Recipient): OutboundMessage {
  const body = template.components?.find((c) => c.type === 'body');
  const params = (body?.parameters ?? []).map((p) => (p.type === 'text' ? p.text : p.type === 'currency' ? p.currency.fallback_value : p.date_time.fallback_value));
  const network = canonical({ language: template.language, ...(template.components === undefined ? {} : { components: template.components }) });
  return { kind: 'template', ...addressOf(recipient), name: template.name, language: template.language.code, params, network };
}

export interface StoredFields {
  text: string | null; templateJson: string | null; mediaJson: string | null; locationJson: string | null; replyTo: string | null;
}

const nonEmpty = (text: string | undefined | null): string | null => (text === undefined || text === null || text === '' ? null : text);

/** The readable text of an interactive message: its body, then its buttons' (or list button's, or link's) titles. */
function interactiveText(content: Extract<OutboundMessage, { kind: 'interactive' }>['content']): string {
  const titles = content.type === 'button' ? content.action.buttons.map((b) => b.reply.title)
    : content.type === 'list' ? [content.action.button] : [content.action.parameters.display_text];
  return `${content.body.text} ${titles.map((t) => `[${t}]`).join(' ')}`;
}

/** What the messages row keeps of a message besides its wire body: readable text, template, media, location, the quoted wamid. */
export function storedFields(message: OutboundMessage): StoredFields {
  const fields: StoredFields = { text: null, templateJson: null, mediaJson: null, locationJson: null, replyTo: null };
  if (message.kind === 'template') {
    fields.templateJson = JSON.stringify({ name: message.name, language: message.language, params: message.params });
    return fields;
  }
  fields.replyTo = message.replyTo ?? null;
  switch (message.kind) {
    case 'text':
      fields.text = message.body;
      break;
    case 'image': case 'video': case 'audio': case 'document': case 'sticker': {
      const media = message.content as { id?: string; link?: string; caption?: string; filename?: string };
      fields.text = nonEmpty(media.caption) ?? nonEmpty(media.filename);
      fields.mediaJson = JSON.stringify({
        id: media.id ?? null, link: media.link ?? null, caption: media.caption ?? null, filename: media.filename ?? null,
      });
      break;
    }
    case 'location': {
      const { latitude, longitude, name, address } = message.content;
      fields.text = nonEmpty(name) ?? nonEmpty(address);
      fields.locationJson = JSON.stringify({ latitude, longitude, name: name ?? null, address: address ?? null });
      break;
    }
    case 'contacts':
      fields.text = message.content.map((card) => card.name.formatted_name).join(', ');
      break;
    case 'interactive':
      fields.text = interactiveText(message.content);
      break;
    case 'reaction':
      // An empty emoji removes the reaction: no text. Like an inbound reaction, it points at the message it reacts to.
      fields.text = nonEmpty(message.content.emoji);
      fields.replyTo ??= message.content.message_id;
      break;
  }
  return fields;
}
