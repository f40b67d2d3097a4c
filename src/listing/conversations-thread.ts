// The worker thread that answers conversation listings on read-only connections of its own, so that a listing
// never holds the event loop that serves sends and callbacks (and puts the second core to work). It also runs the
// WAL checkpoints of each database it has open (db/checkpoints.ts), which the writer would otherwise run in-line.
import { parentPort, workerData } from 'node:worker_threads';
import { createConversationsRepo } from '../db/conversations-repo';
import { startCheckpoints, type Checkpoints } from '../db/checkpoints';
import { openReadOnly, type DB } from '../db/client';
import { SLOT_BYTES, SLOTS, type ListingReply, type ThreadRequest } from './listing-protocol';
import { listConversationsPieces } from '../services/conversations';
import { listedMessageJson } from '../views/message-json';

const port = parentPort!;
/** The answer slots shared with the main thread, and their states (see conversations-reader.ts). */
const shared = workerData as { slab: SharedArrayBuffer; slotStates: Int32Array };
const slab = Buffer.from(shared.slab);

/** A free slot, now taken; undefined when every slot holds an answer still being sent. */
function claimSlot(): number | undefined {
  for (let slot = 0; slot < SLOTS; slot++) if (Atomics.compareExchange(shared.slotStates, slot, 0, 1) === 0) return slot;
  return undefined;
}
type ListRequest = Extract<ThreadRequest, { kind: 'list' }>;
interface Connection { db: DB; list: (request: ListRequest) => Buffer[] }
const open = new Map<string, Connection>();
const checkpoints = new Map<string, Checkpoints>();

function connectionTo(databasePath: string): Connection {
  let entry = open.get(databasePath);
  if (!entry) {
    const db = openReadOnly(databasePath);
    const repo = createConversationsRepo(db, listedMessageJson);
    // One read transaction per answer: all its statements see the same snapshot, whatever commits meanwhile.
    const list = db.$client.transaction((request: ListRequest) =>
      listConversationsPieces(repo, request.userId, request.query, new Date(request.now), request.timeZone));
    entry = { db, list };
    open.set(databasePath, entry);
  }
  return entry;
}

/** What of an error crosses the thread boundary: enough to answer it as the main thread would have. */
function errorReply(error: unknown): ListingReply['error'] {
  const e = error as { name?: unknown; message?: unknown; code?: unknown; statusCode?: unknown };
  return { name: String(e?.name ?? 'Error'), message: String(e?.message ?? error), code: e?.code === undefined ? undefined : String(e.code),
    statusCode: typeof e?.statusCode === 'number' ? e.statusCode : undefined };
}

port.on('message', (request: ThreadRequest) => {
  if (request.kind === 'open') {
    // Opened ahead of the first listing only to save it the time. A database gone meanwhile (an app closed and its
    // folder removed before this message was read) must not end the thread and the other apps' listings with it:
    // a listing of it reports its own error.
    try {
      connectionTo(request.databasePath);
      if (!checkpoints.has(request.databasePath)) checkpoints.set(request.databasePath, startCheckpoints(request.databasePath));
    } catch {
      // nothing to keep open
    }
    return;
  }
  if (request.kind === 'close') {
    open.get(request.databasePath)?.db.$client.close();
    open.delete(request.databasePath);
    checkpoints.get(request.databasePath)?.stop();
    checkpoints.delete(request.databasePath);
    return;
  }
  let reply: ListingReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const pieces = connectionTo(request.databasePath).list(request);
    const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
    const slot = length <= SLOT_BYTES ? claimSlot() : undefined;
    if (slot !== undefined) {
      let at = slot * SLOT_BYTES;
      for (const piece of pieces) at += piece.copy(slab, at);
      reply = { id: request.id, slot, length };
    } else {
      const bytes = Buffer.concat(pieces, length);
      reply = { id: request.id, bytes };
      // A buffer of its own moves without a copy; a small one shares Node's pool and is copied.
      if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) transfer = [bytes.buffer as ArrayBuffer];
    }
  } catch (error) {
    reply = { id: request.id, error: errorReply(error) };
  }
  port.postMessage(reply, transfer);
});
