// Deletions of the retention sweep: aged messages (with the conversations they leave empty), unmatched statuses
// and expired idempotency keys, each a small batch so no write holds the lock for long.
import type { DB } from './client';

export function createRetentionRepo(db: DB) {
  const client = db.$client;
  // Reads (no write lock): the sweep walks conversations by id and finds each one's aged messages by index.
  const conversationsAfter = client.prepare<[number, number], number>(
    'SELECT id FROM conversations WHERE id > ? ORDER BY id LIMIT ?').pluck();
  const agedMessages = client.prepare<[number, number, number], number>(
    'SELECT id FROM messages WHERE conversation_id = ? AND created_at < ? ORDER BY created_at LIMIT ?').pluck();
  // Writes. Statuses go with their message (ON DELETE CASCADE).
  const deleteMessage = client.prepare<[number], { conversationId: number }>(
    'DELETE FROM messages WHERE id = ? RETURNING conversation_id AS conversationId');
  const dropIfEmpty = client.prepare<[number, number]>(
    'DELETE FROM conversations WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?)');
  // What the conversations list shows stays true to the messages left.
  const refresh = client.prepare<{ id: number }>(`UPDATE conversations SET
    last_message_at = (SELECT max(created_at) FROM messages WHERE conversation_id = @id),
    last_inbound_at = (SELECT max(created_at) FROM messages WHERE conversation_id = @id AND direction = 'inbound')
    WHERE id = @id`);
  // Ids grow with received_at, so the oldest rows come first and a batch stops early.
  const deleteOrphans = client.prepare<[number, number]>(`DELETE FROM orphan_statuses WHERE id IN
    (SELECT id FROM orphan_statuses WHERE received_at < ? ORDER BY id LIMIT ?)`);
  const deleteKeys = client.prepare<[number, number]>(`DELETE FROM idempotency_keys WHERE rowid IN
    (SELECT rowid FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`);

  return {
    /** Conversation ids after `afterId`, in order (a page of the sweep's walk). */
    conversationsAfter: (afterId: number, limit: number): number[] => conversationsAfter.all(afterId, limit),
    /** Ids of the conversation's messages created before `before` (ms), oldest first. */
    agedMessages: (conversationId: number, before: number, limit: number): number[] => agedMessages.all(conversationId, before, limit),
    /**
     * Deletes these messages (ids already gone are skipped); each conversation they leave empty goes too, the others'
     * last_message_at/last_inbound_at follow the messages left. Call inside one write.
     */
    deleteMessages(ids: readonly number[]): { messages: number; conversations: number } {
      const touched = new Set<number>();
      let messages = 0;
      for (const id of ids) {
        const row = deleteMessage.get(id);
        if (!row) continue;
        messages += 1;
        touched.add(row.conversationId);
      }
      let conversations = 0;
      for (const id of touched) {
        if (dropIfEmpty.run(id, id).changes > 0) conversations += 1;
        else refresh.run({ id });
      }
      return { messages, conversations };
    },
    /** Deletes up to `limit` unmatched statuses received before `before` (ms); how many went. */
    deleteOrphansBefore: (before: number, limit: number): number => deleteOrphans.run(before, limit).changes,
    /** Deletes up to `limit` idempotency keys created before `before` (ms); how many went. */
    deleteKeysBefore: (before: number, limit: number): number => deleteKeys.run(before, limit).changes,
  };
}
export type RetentionRepo = ReturnType<typeof createRetentionRepo>;
