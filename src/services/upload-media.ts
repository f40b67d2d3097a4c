// Uploading a user's file to their network account (SPEC §12): the kind and limit follow from the MIME type; no credit.
import type { UserRow } from '../db/tables';
import { AppError } from '../errors';
import { UPLOAD_KINDS } from '../../schemas/media-upload';
import type { MediaUploader } from '../messaging/upload';
import { failureError } from './send-failures';
import { accountOf, type SendDeps } from './send-message';

export interface UploadDeps { uploader: MediaUploader; openToken: SendDeps['openToken'] }
export interface UploadedMedia { id: string; mime_type: string; file_size: number }

const KINDS_TEXT = Object.keys(UPLOAD_KINDS).join(', ');

/** The part's MIME type without parameters, lower-case. */
const baseType = (mime: string): string => mime.split(';')[0]!.trim().toLowerCase();

/** The media kind a MIME type uploads as, and its limit; 415 for a type the network does not take. */
export function uploadKind(mimeType: string) {
  const type = baseType(mimeType);
  const kind = Object.hasOwn(UPLOAD_KINDS, type) ? UPLOAD_KINDS[type] : undefined;
  if (!kind) throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `file: ${JSON.stringify(type)} is not a media type the network takes; use one of ${KINDS_TEXT}`);
  return { type, ...kind };
}

export async function uploadMedia(deps: UploadDeps, user: UserRow, file: { stream: AsyncIterable<Buffer>; mimeType: string; filename: string }): Promise<UploadedMedia> {
  // The type first: a 415 wins over an account without messaging configured, and no byte goes out before both.
  const { type, kind, limit } = uploadKind(file.mimeType);
  const account = accountOf(user, deps.openToken);
  const result = await deps.uploader.upload(account, { stream: file.stream, mimeType: type, filename: file.filename, limit });
  switch (result.kind) {
    case 'uploaded':
      return { id: result.id, mime_type: type, file_size: result.size };
    case 'too_large':
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', `file: over the ${limit} bytes the network takes for ${kind} (${type})`);
    case 'empty':
      throw new AppError(400, 'VALIDATION_ERROR', 'file: the file is empty');
    default:
      throw failureError(result);
  }
}
