// Marking an inbound message read at the network (optionally with a typing indicator): no credit, nothing stored.
import type { MessagesRepo } from '../db/messages-repo';
import type { UserRow } from '../db/tables';
import { AppError } from '../errors';
import type { MessagingClient } from '../messaging/client';
import { failureError } from './send-failures';
import { accountOf, type SendDeps } from './send-message';

export interface MarkReadDeps { messages: Pick<MessagesRepo, 'findById'>; client: Pick<MessagingClient, 'markRead'>; openToken: SendDeps['openToken'] }

/** Marks the user's inbound message `messageId` read; its wamid. 404 for another user's, an outbound or an unknown message. */
export async function markRead(deps: MarkReadDeps, user: UserRow, messageId: number, typingIndicator: boolean): Promise<string> {
  const message = deps.messages.findById(messageId);
  if (message === undefined || message.userId !== user.id || message.direction !== 'inbound' || message.wamid === null) {
    throw new AppError(404, 'MESSAGE_NOT_FOUND', `You have no inbound message ${messageId}`);
  }
  const result = await deps.client.markRead(accountOf(user, deps.openToken), message.wamid, typingIndicator);
  if (result.kind !== 'accepted') throw failureError(result);
  return message.wamid;
}
