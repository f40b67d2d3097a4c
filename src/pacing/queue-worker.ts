// The queue worker: per user (hence per phone number id), sends the due queued messages in order at the number's rate,
// through the pacer shared with synchronous sends. A row is claimed (`pending`, tracked) in a write before its network
// call, so a crash leaves it to the interrupted-send settlement, never to a second send. Throttling answers put the
// message back and pause the number (130429, 131048) or hold only its recipient (131056). No loop runs while nothing is
// due: each user's lane sleeps on one timer set for its next due time, expiry or end of pause.
import type { CreditsRepo } from '../db/credits-repo';
import type { MessagesRepo } from '../db/messages-repo';
import type { ClaimedMessage, QueueRepo } from '../db/queue-repo';
import type { UserRow } from '../db/tables';
import type { Writer } from '../db/writer';
import { asStorageError } from '../errors';
import { TEMPORARY } from '../messaging/answers';
import type { MessagingAccount, MessagingClient, OutboundMessage, SendOptions, SendResult } from '../messaging/client';
import { accountOf } from '../services/send-message';
import { failureRecord } from '../services/send-failures';
import { contactAnswered, contactOfSend } from '../services/send-recipient';
import type { SendTracker } from '../services/send-tracker';
import type { ContactResolver } from '../contacts/resolve';
import { BSUID_PATTERN } from '../../schemas/network-send';
import { monthKey } from '../support/time';
import type { Pacer } from '../messaging/pacer';

type LogFn = (details: object, message: string) => void;
/** What the worker counts: throttling answers by code, per phone number id. */
export type ThrottleCode = '130429' | '131056' | '131048' | 'other';

const BSUID = new RegExp(BSUID_PATTERN);
/** A stored recipient as the address it was sent to: a business-scoped user id, or a phone number. */
const addressed = (to: string): OutboundMessage => ({ kind: 'text', to, body: '', ...(BSUID.test(to) ? { toBsuid: true as const } : {}) });

export interface QueueWorkerDeps {
  writer: Writer;
  queue: QueueRepo;
  messages: Pick<MessagesRepo, 'markAccepted' | 'markFailed'>;
  contacts: Pick<ContactResolver, 'resolve'>;
  credits: Pick<CreditsRepo, 'refund'>;
  users: { findById(id: number): UserRow | undefined };
  client: Pick<MessagingClient, 'sendPayload'>;
  pacer: Pacer;
  tracker: SendTracker;
  openToken: (sealed: string, userId: number) => string | undefined;
  timezone: string;
  now: () => Date;
  log: { info: LogFn; error: LogFn; warn: LogFn };
  onThrottle?: (phoneNumberId: string, code: ThrottleCode) => void;
  /** Network calls of one number under way at once (the rate bounds them too). */
  maxInFlight?: number;
}

/** 131056 holds the recipient 6 s, then twice as long at each repeat, up to a minute. */
const HOLD_BASE_MS = 6000;
const HOLD_MAX_MS = 60_000;
/** 131048 (spam rate limit): the number waits a minute. */
const SPAM_PAUSE_MS = 60_000;
/** Network unreachable or temporarily unavailable: the number waits a few seconds. */
const UNAVAILABLE_PAUSE_MS = 5000;
/** Never a timer shorter than this after a run that found nothing due (no busy loop whatever the data says). */
const IDLE_FLOOR_MS = 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;
const STORAGE_WAIT_MS = 10_000;
/** A message is claimed this long before its turn at least, and at most: twice the recent time of a claim write between. */
const CLAIM_LEAD_MIN_MS = 20;
const CLAIM_LEAD_MAX_MS = 200;
/** How fast the claim time followed moves towards the latest one. */
const CLAIM_TIME_WEIGHT = 0.2;

/** Claims under way at once: the slots a claim lead spans at the rate, and a couple more. */
const claimsAhead = (leadMs: number, rate: number) => Math.ceil((leadMs * rate) / 1000) + 2;

function noteClaimTime(lane: Lane, ms: number): void {
  lane.claimMs += (ms - lane.claimMs) * CLAIM_TIME_WEIGHT;
  lane.claimLead = Math.min(CLAIM_LEAD_MAX_MS, Math.max(CLAIM_LEAD_MIN_MS, 2 * lane.claimMs));
}

const record = (code: string, title: string, details: string) => JSON.stringify({ code, title, details });
export const EXPIRED = record('EXPIRED', 'The message expired in the queue',
  'It was still queued at its expires_at, so it was not sent; its credit was refunded.');
const NOT_CONFIGURED = record('MESSAGING_NOT_CONFIGURED', 'Messaging is not configured for this account',
  'The account had no readable messaging token or phone number id when the message was due; it was not sent and its credit was refunded.');

interface Lane {
  userId: number;
  running: Promise<void> | undefined;
  again: boolean;
  timer: NodeJS.Timeout | undefined;
  /** App clock (ms): the number's queue sends nothing before this. */
  pausedUntil: number;
  phoneNumberId: string | undefined;
  inFlight: Set<Promise<void>>;
  /** Calls handed to the network thread that have not left yet. */
  unsent: Set<Promise<void>>;
  /** 131056 repeats per recipient since its last accepted message. */
  holds: Map<string, number>;
  /** A claim write's recent time (ms), and how long before its slot a message is claimed for it. */
  claimMs: number;
  claimLead: number;
}

export function createQueueWorker(deps: QueueWorkerDeps) {
  const lanes = new Map<number, Lane>();
  const maxInFlight = deps.maxInFlight ?? 64;
  let stopped = true;
  // Settles at stop(): the waits for a slot end with it (the pacer's timers are unref'd: a shutdown must not wait on
  // one, nor have the process exit under it before the worker stopped). A call handed to the network thread is made.
  let stopSignal = () => {};
  let stopping = new Promise<void>((resolve) => { stopSignal = resolve; });
  const untilOrStop = (at: number) => Promise.race([deps.pacer.until(at), stopping]);
  const now = () => deps.now().getTime();

  const laneOf = (userId: number): Lane => {
    let lane = lanes.get(userId);
    if (!lane) {
      lane = {
        userId, running: undefined, again: false, timer: undefined, pausedUntil: 0, phoneNumberId: undefined, inFlight: new Set(), unsent: new Set(), holds: new Map(),
        claimMs: 0, claimLead: CLAIM_LEAD_MIN_MS,
      };
      lanes.set(userId, lane);
    }
    return lane;
  };

  /** Starts the lane of `userId` now (or once its current run ends). */
  function wake(userId: number): void {
    if (stopped) return;
    const lane = laneOf(userId);
    if (lane.running) {
      lane.again = true;
      return;
    }
    clearTimeout(lane.timer);
    lane.timer = undefined;
    lane.again = false;
    lane.running = run(lane).catch((error: unknown) => {
      deps.log.error({ err: error, userId }, 'send queue run failed; it runs again within a minute');
      sleepUntil(lane, now() + 60_000);
    }).finally(() => {
      lane.running = undefined;
      if (lane.again) wake(userId);
    });
  }

  function sleepUntil(lane: Lane, at: number): void {
    if (stopped) return;
    clearTimeout(lane.timer);
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - now()));
    lane.timer = setTimeout(() => wake(lane.userId), delay);
    lane.timer.unref();
  }

  /** The lane sleeps until its next due message, expiry or end of pause; nothing waiting: no timer at all. */
  function sleepUntilDue(lane: Lane, floor: boolean): void {
    const { sendAt, expiresAt } = deps.queue.nextDue(lane.userId);
    const times = [sendAt, expiresAt].filter((t): t is number => t !== null);
    if (times.length === 0) return;
    let at = Math.max(Math.min(...times), lane.pausedUntil);
    if (floor) at = Math.max(at, now() + IDLE_FLOOR_MS);
    sleepUntil(lane, at);
  }

  const refund = (userId: number, createdAt: number) => deps.credits.refund(userId, monthKey(new Date(createdAt), deps.timezone));

  async function expire(lane: Lane): Promise<void> {
    const at = now();
    const expired = await deps.writer.write(() => {
      const rows = deps.queue.expire(lane.userId, at, EXPIRED);
      for (const row of rows) refund(row.userId, row.createdAt);
      return rows.length;
    });
    if (expired > 0) deps.log.info({ userId: lane.userId, messages: expired }, 'queued messages expired and refunded');
  }

  /**
   * Sends the lane's due messages, each at a slot of the pacer reserved ahead. A message is claimed (its write) about
   * a claim write's time before its slot, while the messages before it still wait for theirs: claims overlap, so a
   * busy event loop that makes each write slower delays no slot, and the next slot is reserved before the last one
   * passed (a late wake-up does not push the pace back). A claim that finds nothing due ends the run.
   */
  async function run(lane: Lane): Promise<void> {
    await expire(lane);
    const ahead = new Set<Promise<void>>();
    let empty = false;
    let failure: { error: unknown } | undefined;
    try {
      for (;;) {
        if (stopped || empty) break;
        if (failure) throw failure.error;
        if (lane.pausedUntil > now()) return sleepUntilDue(lane, false);
        const user = deps.users.findById(lane.userId);
        if (!user) return; // deleted: its messages went with it
        let account: MessagingAccount | undefined;
        try {
          account = accountOf(user, deps.openToken);
        } catch {
          account = undefined;
        }
        lane.phoneNumberId = account?.phoneNumberId;
        while (lane.inFlight.size >= maxInFlight) await Promise.race(lane.inFlight);
        // Handed to the network thread, a call may still wait there for room in the past second (the number's calls
        // unanswered): no more of those than a claim lead's worth, so a pause or a stop holds every later one back.
        while (lane.unsent.size >= claimsAhead(lane.claimLead, user.messagingRate)) await Promise.race(lane.unsent);
        // Until it is claimed a message stays in the queue, cancellable, and a throttling answer can still hold or pause it.
        const lead = lane.claimLead;
        while (ahead.size >= claimsAhead(lead, user.messagingRate)) await Promise.race(ahead);
        const slot = account === undefined ? undefined : deps.pacer.reserve(account.phoneNumberId, user.messagingRate);
        if (slot !== undefined) await untilOrStop(slot - lead);
        if (stopped || empty) break;
        const step = claimAndSend(lane, account, user.messagingRate, slot).then((claimed) => {
          if (!claimed) empty = true;
        }, (error: unknown) => {
          failure ??= { error };
        });
        ahead.add(step);
        void step.finally(() => ahead.delete(step));
      }
    } finally {
      await Promise.all(ahead);
    }
    if (failure) throw failure.error;
    if (empty) {
      await expire(lane);
      sleepUntilDue(lane, true);
    }
  }

  /** Claims the lane's next due message, then sends it at `slot`; false when none was due. */
  async function claimAndSend(lane: Lane, account: MessagingAccount | undefined, rate: number, slot: number | undefined): Promise<boolean> {
    const at = now();
    const started = performance.now();
    const claimed = await deps.writer.write(() => {
      const row = deps.queue.claimNext(lane.userId, at);
      if (row) deps.tracker.begin(row.id);
      return row;
    });
    noteClaimTime(lane, performance.now() - started);
    if (!claimed) return false;
    if (slot !== undefined) await untilOrStop(slot);
    if (stopped || lane.pausedUntil > now()) {
      await putBack(lane, claimed, at);
      return true;
    }
    if (account === undefined || slot === undefined) {
      await settle(claimed, () => {
        deps.messages.markFailed(claimed.id, NOT_CONFIGURED, at);
        refund(claimed.userId, claimed.createdAt);
      });
      return true;
    }
    let left = () => {};
    const leaving = new Promise<void>((resolve) => { left = resolve; });
    const sending = deliver(lane, account, claimed, { rate, slot: () => slot, onLeft: left }).catch((error: unknown) => {
      deps.log.error({ err: error, messageId: claimed.id }, 'queued send failed to settle; it is settled as interrupted later');
    }).finally(() => lane.inFlight.delete(sending));
    lane.inFlight.add(sending);
    const gone: Promise<void> = Promise.race([leaving, sending]).finally(() => lane.unsent.delete(gone));
    lane.unsent.add(gone);
    return true;
  }

  /** Stores a claimed message's outcome; a write storage refuses is retried in the background (the row stays tracked). */
  async function settle(row: ClaimedMessage, body: () => void, wamid?: string): Promise<void> {
    await deps.tracker.settle(row.id, body, STORAGE_WAIT_MS, wamid).catch((error: unknown) => {
      if (asStorageError(error) === undefined) throw error;
    });
  }

  /** Puts a message the network did not take back in the queue, due at `dueAt`, and wakes the lane for it. */
  async function putBack(lane: Lane, row: ClaimedMessage, dueAt: number, extra?: () => void): Promise<void> {
    await settle(row, () => {
      deps.queue.requeue(row.id, dueAt);
      extra?.();
    });
    wake(lane.userId);
  }

  function pause(lane: Lane, ms: number): void {
    lane.pausedUntil = Math.max(lane.pausedUntil, now() + ms);
  }

  async function deliver(lane: Lane, account: MessagingAccount, row: ClaimedMessage, pace: NonNullable<SendOptions['pace']>): Promise<void> {
    const result: SendResult = await deps.client.sendPayload(account, row.payloadJson, { attempts: 1, pace }).catch((error: unknown) => {
      deps.tracker.end(row.id);
      throw error;
    });
    const at = now();
    if (result.kind === 'accepted') {
      lane.holds.delete(row.to);
      // The conversation is the contact the network answered (its number, else its user id), else the one it was queued in.
      return settle(row, () => deps.messages.markAccepted(row.id, result.wamid,
        contactAnswered(deps.contacts, row.userId, result, at) ?? contactOfSend(deps.contacts, row.userId, addressed(row.to), at), at), result.wamid);
    }
    const code = result.kind === 'unavailable' ? undefined : result.upstream.code;
    if (result.kind === 'throttled' && code === 131056) {
      const repeats = lane.holds.get(row.to) ?? 0;
      lane.holds.set(row.to, repeats + 1);
      const until = at + Math.min(HOLD_MAX_MS, HOLD_BASE_MS * 2 ** repeats);
      deps.onThrottle?.(account.phoneNumberId, '131056');
      return putBack(lane, row, until, () => deps.queue.holdRecipient(row.userId, row.to, until));
    }
    if (result.kind === 'throttled') {
      pause(lane, Math.max(1, result.retryAfterSeconds) * 1000);
      deps.onThrottle?.(account.phoneNumberId, code === 130429 ? '130429' : 'other');
      return putBack(lane, row, at);
    }
    if (code === 131048) {
      pause(lane, SPAM_PAUSE_MS);
      deps.onThrottle?.(account.phoneNumberId, '131048');
      return putBack(lane, row, at);
    }
    // Certainly not taken by the network: sent again after a short pause of the number.
    if ((result.kind === 'unavailable' && result.reason === 'unreachable') || (code !== undefined && code !== null && TEMPORARY.has(code))) {
      pause(lane, UNAVAILABLE_PAUSE_MS);
      return putBack(lane, row, at);
    }
    // Refused, or no answer in time (it may have been delivered: never sent again): failed and refunded, as a direct send.
    return settle(row, () => {
      deps.messages.markFailed(row.id, failureRecord(result), at);
      refund(row.userId, row.createdAt);
    });
  }

  return {
    wake,
    /** Every user with waiting messages gets its lane (start-up: a restart resumes the queue). */
    start(): void {
      stopped = false;
      stopping = new Promise<void>((resolve) => { stopSignal = resolve; });
      for (const userId of deps.queue.waitingUsers()) wake(userId);
    },
    /** No new claim or timer; resolves when the sends under way have stored their outcome. */
    async stop(): Promise<void> {
      stopped = true;
      stopSignal();
      for (const lane of lanes.values()) clearTimeout(lane.timer);
      await Promise.all([...lanes.values()].map((lane) => lane.running));
      await Promise.all([...lanes.values()].flatMap((lane) => [...lane.inFlight]));
    },
    /** Per phone number id: paused until (app clock ms), for the metrics. */
    pauses(): { userId: number; phoneNumberId: string | undefined; pausedUntil: number }[] {
      return [...lanes.values()].map((l) => ({ userId: l.userId, phoneNumberId: l.phoneNumberId, pausedUntil: l.pausedUntil }));
    },
  };
}
export type QueueWorker = ReturnType<typeof createQueueWorker>;
