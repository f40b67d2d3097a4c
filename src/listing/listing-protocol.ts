// What the main thread and the listing thread say to each other, and the answer slots they share
// (conversations-reader.ts holds them, conversations-thread.ts writes answers into them).
import type { ConversationsQuery } from '../../schemas/conversations';

/** Answer slots: a few listings in flight at once, each up to the largest answer (5,000 messages) in most cases. */
export const SLOTS = 4;
export const SLOT_BYTES = 2 * 1024 * 1024;

export type ThreadRequest =
  | { kind: 'list'; id: number; databasePath: string; userId: number; query: ConversationsQuery; now: number; timeZone: string }
  /** The app listens: the thread opens its connection now, so that the first listing does not wait for it, and checkpoints the WAL from now on. */
  | { kind: 'open'; databasePath: string }
  /** The app closes: the thread closes its connection to this database. */
  | { kind: 'close'; databasePath: string };
export interface ListingReply {
  id: number;
  /** The slot the answer was written into (the thread claimed it), and its length there. */
  slot?: number;
  length?: number;
  /** The answer, when it did not go into a slot (none free, or too big for one). */
  bytes?: Uint8Array;
  error?: { name: string; message: string; code: string | undefined; statusCode: number | undefined } | undefined;
}
