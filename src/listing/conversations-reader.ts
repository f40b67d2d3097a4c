// Conversation listings off the event loop: answered by a worker thread with read-only connections of its own
// (conversations-thread.ts). One thread per process, started at the first listing (and again if it dies), with a
// connection per database; it keeps the process alive only while listings are under way. An in-memory database
// has no second connection: there the listing runs in-line.
//
// Answers come back in slots of one shared buffer, sent from there and freed once the response is done: a listing
// allocates no memory of its own for its answer in either thread (large per-answer buffers fragmented both threads'
// heaps and kept the main thread's garbage collector busy). An answer with no free slot, or too big for one, moves
// across as a buffer of its own.
//
// Fair: a user has at most USER_TURNS listings under way at once (asked of the thread, or being sent); more wait their
// turn in arrival order, and a listing whose client went away while it waited is never asked of the thread.
import type { Worker } from 'node:worker_threads';
import type { ConversationsQuery } from '../../schemas/conversations';
import type { ConversationsRepo } from '../db/conversations-repo';
import { AppError } from '../errors';
import { listConversationsJson } from '../services/conversations';
import { SLOT_BYTES, SLOTS, type ListingReply, type ThreadRequest } from './listing-protocol';
import { abandoned, createTurns } from './listing-turns';
import { startThread } from '../support/thread';
export { USER_TURNS } from './listing-turns';

/** A listing's answer; `done` frees what holds it once it has been sent (or the response ended otherwise). */
export interface Listing { bytes: Buffer; done: () => void }
interface Pending { databasePath: string; resolve: (listing: Listing) => void; reject: (error: unknown) => void }

export interface ConversationsReader {
  /**
   * The answer of GET /api/user/{id}/conversations as UTF-8 JSON, once it is this user's turn. `gone` aborts when the
   * client went away: a listing still waiting its turn is then refused (LISTING_ABANDONED) and never run.
   */
  list(userId: number, query: ConversationsQuery, now: Date, gone?: AbortSignal): Promise<Listing>;
  /**
   * Starts the thread and its connection now (a server about to listen), not at the first listing; from then on the
   * thread also checkpoints the database's WAL (again after a restart of the thread). False when it has no thread.
   */
  warm(): boolean;
  /**
   * Answer slots free now (of this process); this reader's listings under way and waiting now, the most under way for
   * one user, and since start the listings run and those abandoned while they waited.
   */
  stats(): { freeSlots: number; underWay: number; waiting: number; peakPerUser: number; run: number; abandoned: number };
  /** Waits for this database's listings under way, then lets the thread close its connection. */
  close(): Promise<void>;
}

/** The thread's error as the main thread would have thrown it: AppErrors keep their answer, SQLite errors their code. */
function rebuilt(error: NonNullable<ListingReply['error']>): Error {
  if (error.name === 'AppError' && error.statusCode !== undefined && error.code !== undefined) {
    return new AppError(error.statusCode, error.code, error.message);
  }
  return Object.assign(new Error(error.message), { name: error.name, code: error.code });
}

/** The slots' bytes, and their states: 0 free, 1 taken (claimed by the thread with an atomic exchange, freed here). */
const slab = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
const slotStates = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
const pending = new Map<number, Pending>();
const drainWaiters = new Map<string, (() => void)[]>();
let nextId = 0;
let worker: Worker | undefined;
/** Databases of servers that listen: each new thread opens them and checkpoints them. */
const warmed = new Set<string>();

const busyWith = (databasePath: string) => [...pending.values()].some((p) => p.databasePath === databasePath);
/** Slots whose answer a response is sending. */
const held = new Set<number>();
function freeSlot(slot: number): void {
  held.delete(slot);
  Atomics.store(slotStates, slot, 0);
}
const noop = () => undefined;

function settle(id: number, settleWith: (p: Pending) => void): void {
  const entry = pending.get(id);
  if (!entry) return;
  pending.delete(id);
  settleWith(entry);
  if (pending.size === 0) worker?.unref();
  if (!busyWith(entry.databasePath)) {
    for (const resolve of drainWaiters.get(entry.databasePath) ?? []) resolve();
    drainWaiters.delete(entry.databasePath);
  }
}

/** The answer of a reply: a view of its slot (freed by `done`, once), or its own bytes. */
function listingOf(reply: ListingReply): Listing {
  const { slot, length } = reply;
  if (slot !== undefined && length !== undefined) {
    held.add(slot);
    let freed = false;
    const done = () => {
      if (freed) return;
      freed = true;
      freeSlot(slot);
    };
    return { bytes: Buffer.from(slab, slot * SLOT_BYTES, length), done };
  }
  return { bytes: Buffer.from(reply.bytes!.buffer, reply.bytes!.byteOffset, reply.bytes!.byteLength), done: noop };
}

function newThread(): Worker {
  // A listing's garbage is mostly its answer's bytes (outside the JS heap): a small young generation keeps the thread's
  // memory low without more collections of note.
  const thread = startThread(__filename, 'conversations-thread', { workerData: { slab, slotStates }, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  thread.on('message', (reply: ListingReply) => settle(reply.id, (p) => {
    if (reply.error) p.reject(rebuilt(reply.error));
    else p.resolve(listingOf(reply));
  }));
  // A thread that died takes its listings with it; the next listing starts a new one.
  const lost = (error: unknown) => {
    if (worker === thread) worker = undefined;
    for (const id of [...pending.keys()]) settle(id, (p) => p.reject(error));
    // What it had claimed for answers never delivered is free again.
    for (let slot = 0; slot < SLOTS; slot++) if (!held.has(slot)) freeSlot(slot);
  };
  thread.on('error', lost);
  thread.on('exit', (code) => lost(new Error(`the listing thread stopped (exit code ${code})`)));
  for (const databasePath of warmed) thread.postMessage({ kind: 'open', databasePath } satisfies ThreadRequest);
  return thread;
}

const freeSlots = () => {
  let free = 0;
  for (let slot = 0; slot < SLOTS; slot++) if (Atomics.load(slotStates, slot) === 0) free += 1;
  return free;
};

export function createConversationsReader(databasePath: string, timeZone: string, inline: ConversationsRepo): ConversationsReader {
  const turns = createTurns();
  let run = 0;
  const stats = () => ({ freeSlots: freeSlots(), ...turns.stats(), run });
  /** The listing once it is the user's turn; its `done` also gives the turn back. */
  async function inTurn(userId: number, gone: AbortSignal | undefined, work: () => Promise<Listing>): Promise<Listing> {
    const release = await turns.take(userId, gone);
    let listing: Listing;
    try {
      if (gone?.aborted) throw abandoned();
      run += 1;
      listing = await work();
    } catch (error) {
      release();
      throw error;
    }
    return { bytes: listing.bytes, done: () => { listing.done(); release(); } };
  }
  if (databasePath === ':memory:') {
    return {
      list: (userId, query, now, gone) => inTurn(userId, gone, async () => ({ bytes: listConversationsJson(inline, userId, query, now, timeZone), done: noop })),
      warm: () => false,
      stats,
      close: async () => undefined,
    };
  }
  const ask = (userId: number, query: ConversationsQuery, now: Date): Promise<Listing> => {
    const thread = (worker ??= newThread());
    // Only a thread with listings under way keeps the process alive.
    if (pending.size === 0) thread.ref();
    const id = nextId++;
    const answer = new Promise<Listing>((resolve, reject) => pending.set(id, { databasePath, resolve, reject }));
    thread.postMessage({ kind: 'list', id, databasePath, userId, query, now: now.getTime(), timeZone } satisfies ThreadRequest);
    return answer;
  };
  return {
    list: (userId, query, now, gone) => inTurn(userId, gone, () => ask(userId, query, now)),
    stats,
    warm() {
      warmed.add(databasePath);
      if (worker) worker.postMessage({ kind: 'open', databasePath } satisfies ThreadRequest);
      else worker = newThread();
      // Idle until the first listing: it keeps no process alive.
      if (pending.size === 0) worker.unref();
      return true;
    },
    async close() {
      if (busyWith(databasePath)) await new Promise<void>((resolve) => drainWaiters.set(databasePath, [...drainWaiters.get(databasePath) ?? [], resolve]));
      warmed.delete(databasePath);
      worker?.postMessage({ kind: 'close', databasePath } satisfies ThreadRequest);
    },
  };
}
