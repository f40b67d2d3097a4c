// Sends a crash cut off are settled: past the send budget (2 × MESSAGING_TIMEOUT_MS + 60 s), a message still pending
// without a wamid becomes failed INTERRUPTED and its credit goes back to the month it was taken from; its
// idempotency key then answers 502 MESSAGING_OUTCOME_UNKNOWN with the message id. The app's clock is injected.
import t from 'tap';
import type { App } from '../src/app';
import { sendingApp, TIMEOUT_MS, TO } from './fixtures/sending';

const BUDGET_MS = 2 * TIMEOUT_MS + 60_000;
// 22:00 on 28 February in New York, already 1 March in UTC: the credit was taken from February's counter.
const CREATED = Date.parse('2026-03-01T03:00:00.000Z');

/** What a send leaves when the process dies during its network call: key claimed and bound, credit taken, message pending. */
function crashedSend(app: App, userId: number, createdAt: number, key?: string): number {
  return app.writer.writeNow(() => {
    if (key !== undefined) app.idempotencyRepo.claim(userId, key, 'hash-of-' + key, createdAt, { expiredBefore: 0 });
    app.creditsRepo.reserve(userId, '2026-02', 10);
    const id = app.messagesRepo.insertOutbound({ userId, to: TO, type: 'text', text: 'Hi', payloadJson: '{}', createdAt });
    if (key !== undefined) app.idempotencyRepo.bind(userId, key, id);
    return id;
  });
}

async function setup(t: tap.Test) {
  let now = CREATED + BUDGET_MS + 1;
  const ctx = await sendingApp(t, { config: { timezone: 'America/New_York' }, options: { now: () => new Date(now) } });
  return { ...ctx, setNow: (ms: number) => { now = ms; } };
}

t.test('past the budget: failed INTERRUPTED, refunded to its month; younger, busy or with a wamid: untouched', async (t) => {
  const { app, user, setNow } = await setup(t);
  await app.ready();
  await app.settleInterrupted.run();
  const old = crashedSend(app, user.id, CREATED);
  const young = crashedSend(app, user.id, CREATED + 2);
  const withWamid = crashedSend(app, user.id, CREATED);
  app.db.$client.prepare("UPDATE messages SET wamid = 'wamid.kept' WHERE id = ?").run(withWamid);
  const busy = crashedSend(app, user.id, CREATED);
  app.sendTracker.begin(busy);
  t.equal(app.creditsRepo.used(user.id, '2026-02'), 4);

  setNow(CREATED + BUDGET_MS + 1);
  t.equal(await app.settleInterrupted.run(), 1, 'only the old one, exactly at one millisecond past the budget');
  t.match(app.messagesRepo.findById(old), { status: 'failed', wamid: null, statusUpdatedAt: CREATED + BUDGET_MS + 1 });
  t.same(JSON.parse(app.messagesRepo.findById(old)!.errorJson!), {
    code: 'INTERRUPTED', title: 'The send was interrupted before its outcome was stored',
    details: 'The gateway stopped, or could not store the answer, during the send: the message may or may not have been sent. Its credit was refunded.',
  });
  t.match(app.messagesRepo.findById(young), { status: 'pending' });
  t.match(app.messagesRepo.findById(withWamid), { status: 'pending', wamid: 'wamid.kept' }, 'a stored wamid is never refunded');
  t.match(app.messagesRepo.findById(busy), { status: 'pending' }, 'a send this process still handles');
  t.equal(app.creditsRepo.used(user.id, '2026-02'), 3, 'one credit back, to February');
  t.equal(app.creditsRepo.used(user.id, '2026-03'), 0);

  setNow(CREATED + BUDGET_MS + 10);
  t.equal(await app.settleInterrupted.run(), 1, 'the younger one, on a later run');
  t.equal(await app.settleInterrupted.run(), 0, 'nothing twice');
  t.equal(app.creditsRepo.used(user.id, '2026-02'), 2);
  app.sendTracker.end(busy);
  t.equal(await app.settleInterrupted.run(), 1, 'once no longer handled here, it is settled too');
  t.equal(app.creditsRepo.used(user.id, '2026-02'), 1, 'the one with a wamid stays charged');
});

t.test('a repeat of an interrupted key: 502 MESSAGING_OUTCOME_UNKNOWN with the message id, before and after settling, never a send', async (t) => {
  const { app, user, sandbox, auth } = await setup(t);
  // Same body as the crashed request: the fingerprint the send computes for it.
  const first = await app.inject({ method: 'POST', url: '/api/message/send', headers: { ...auth, 'idempotency-key': 'probe' }, payload: { to: TO, type: 'text', text: { body: 'Hi' } } });
  t.equal(first.statusCode, 201);
  const hash = app.db.$client.prepare("SELECT request_hash FROM idempotency_keys WHERE key = 'probe'").pluck().get() as string;
  const id = app.writer.writeNow(() => {
    app.idempotencyRepo.claim(user.id, 'lost', hash, CREATED, { expiredBefore: 0 });
    const messageId = app.messagesRepo.insertOutbound({ userId: user.id, to: TO, type: 'text', text: 'Hi', payloadJson: '{}', createdAt: CREATED });
    app.idempotencyRepo.bind(user.id, 'lost', messageId);
    return messageId;
  });
  const repeat = () => app.inject({ method: 'POST', url: '/api/message/send', headers: { ...auth, 'idempotency-key': 'lost' }, payload: { to: TO, type: 'text', text: { body: 'Hi' } } });
  const expected = {
    statusCode: 502, code: 'MESSAGING_OUTCOME_UNKNOWN', error: 'Bad Gateway', id,
    message: 'The first request with this Idempotency-Key was interrupted before its outcome was stored: the message may or may not have been sent. '
      + 'Check it, and send again under a new key if needed',
  };
  const before = await repeat();
  t.equal(before.statusCode, 502);
  t.same(before.json(), expected, 'the process that ran it is gone: not "in use"');
  await app.settleInterrupted.run();
  t.match(app.messagesRepo.findById(id), { status: 'failed' });
  t.same((await repeat()).json(), expected, 'still bound to its message once settled');
  const other = await app.inject({ method: 'POST', url: '/api/message/send', headers: { ...auth, 'idempotency-key': 'lost' }, payload: { to: TO, type: 'text', text: { body: 'Other' } } });
  t.equal(other.statusCode, 422, 'another body with that key is still a reuse');
  t.equal(sandbox.requests.length, 1, 'only the first, successful send reached the network');
});

t.test('the start-up pass settles what a crash left, once the app is ready', async (t) => {
  const { app, user } = await setup(t);
  const id = crashedSend(app, user.id, CREATED);
  await app.ready();
  const deadline = Date.now() + 30_000;
  while (app.messagesRepo.findById(id)!.status === 'pending' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  t.match(app.messagesRepo.findById(id), { status: 'failed' });
  t.equal(app.creditsRepo.used(user.id, '2026-02'), 0);
});

t.test('a long table is scanned in steps: a pending send far behind many others is found', async (t) => {
  const { app, user } = await setup(t);
  await app.ready();
  await app.settleInterrupted.run();
  const first = crashedSend(app, user.id, CREATED);
  const insert = app.db.$client.prepare(`INSERT INTO messages (user_id, conversation_id, direction, type, status, payload_json, created_at)
    SELECT user_id, conversation_id, 'outbound', 'text', 'accepted', '{}', created_at FROM messages WHERE id = ?`);
  app.writer.writeNow(() => { for (let i = 0; i < 4500; i++) insert.run(first); });
  const last = crashedSend(app, user.id, CREATED);
  t.equal(await app.settleInterrupted.run(), 2);
  t.match([app.messagesRepo.findById(first)!.status, app.messagesRepo.findById(last)!.status], ['failed', 'failed']);
});
