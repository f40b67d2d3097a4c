import t from 'tap';
import { sendingApp, TO } from './fixtures/sending';
import { bearer, createUser } from './helper';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const MONTH = '2026-03';

/** Resolves once `check` holds (each turn of 20 ms); the test's own timeout bounds it. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

t.test('Prefer: respond-async → 202 queued, then sent by the worker; send_at → 202 scheduled', async (t) => {
  let now = NOW;
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 5, options: { now: () => now } });
  await app.ready();
  const res = await post('/api/message/send', { to: TO, type: 'text', text: { body: 'later' } }, { prefer: 'respond-async' });
  t.equal(res.statusCode, 202);
  t.equal(res.headers['preference-applied'], 'respond-async');
  const body = res.json();
  t.same(body, {
    id: body.id, wamid: null, direction: 'outbound', type: 'text', text: 'later', status: 'queued', created_at: NOW.toISOString(),
    to: TO, origin: 'api', status_updated_at: null, error: null, statuses: [], send_at: NOW.toISOString(), expires_at: null, credits_remaining: 4,
  });
  t.equal(app.creditsRepo.used(user.id, MONTH), 1, 'the credit is reserved at once');
  await until(() => app.messagesRepo.findById(body.id)!.status === 'accepted');
  t.equal(sandbox.requests.length, 1);

  const at = new Date(NOW.getTime() + 3600_000).toISOString();
  const scheduled = await post('/api/message/send2', { to: TO, template_name: 'hello', language: 'en', param1: 'a', param2: 'b', send_at: at });
  t.equal(scheduled.statusCode, 202);
  t.match(scheduled.json(), { status: 'scheduled', send_at: at, type: 'template', credits_remaining: 3 });
  const listing = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations`, headers: bearer(app, user) });
  t.match(JSON.stringify(listing.json()), /"status":"scheduled"/, 'the listing shows it scheduled');
  now = new Date(NOW.getTime() + 3600_000);
  app.sendQueue.wake(user.id);
  await until(() => app.messagesRepo.findById(scheduled.json().id)!.status === 'accepted');
  t.equal(sandbox.requests.length, 2);
  t.equal(app.creditsRepo.used(user.id, MONTH), 2);

  const far = await post('/api/message/send', { to: TO, type: 'text', text: { body: 'x' }, send_at: new Date(now.getTime() + 31 * 86400_000).toISOString() });
  t.equal(far.statusCode, 400);
  t.equal(far.json().message, 'body/send_at must be at most 30 days ahead');
  const backwards = await post('/api/message/send', { to: TO, type: 'text', text: { body: 'x' }, expires_at: new Date(now.getTime() - 1000).toISOString() });
  t.equal(backwards.statusCode, 400);
  t.equal(backwards.json().message, 'body/expires_at must be after now');
  t.equal(app.creditsRepo.used(user.id, MONTH), 2, 'refused requests charge nothing');
});

t.test('cancel: a scheduled message is refunded; again → 409; another user → 404', async (t) => {
  const { app, sandbox, user, post, auth } = await sendingApp(t, { credits: 5, options: { now: () => NOW } });
  await app.ready();
  const res = await post('/api/message/send', { to: TO, type: 'text', text: { body: 'x' }, send_at: new Date(NOW.getTime() + 60_000).toISOString() });
  const id = res.json().id;
  t.equal(app.creditsRepo.used(user.id, MONTH), 1);
  const other = await createUser(app, { email: 'ben@example.com', messagingToken: 'x', messagingPhoneNumberId: '222', monthlyCredits: 1 });
  const foreign = await app.inject({ method: 'DELETE', url: `/api/message/${id}`, headers: bearer(app, other) });
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json().code, 'MESSAGE_NOT_FOUND');
  const cancelled = await app.inject({ method: 'DELETE', url: `/api/message/${id}`, headers: auth });
  t.equal(cancelled.statusCode, 200);
  t.match(cancelled.json(), { id, status: 'failed', error: { code: 'CANCELLED' } });
  t.equal(app.creditsRepo.used(user.id, MONTH), 0, 'refunded');
  const again = await app.inject({ method: 'DELETE', url: `/api/message/${id}`, headers: auth });
  t.equal(again.statusCode, 409);
  t.equal(again.json().code, 'MESSAGE_NOT_QUEUED');
  t.equal(sandbox.requests.length, 0);
});

t.test('expires_at: a message still waiting then fails EXPIRED and is refunded (injected clock)', async (t) => {
  let now = NOW;
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 5, options: { now: () => now } });
  await app.ready();
  const sendAt = new Date(NOW.getTime() + 60_000).toISOString();
  const expiresAt = new Date(NOW.getTime() + 30 * 60_000).toISOString();
  const res = await post('/api/message/send', { to: TO, type: 'text', text: { body: 'x' }, send_at: sendAt, expires_at: expiresAt });
  t.equal(res.statusCode, 202);
  t.match(res.json(), { status: 'scheduled', send_at: sendAt, expires_at: expiresAt });
  t.equal(app.creditsRepo.used(user.id, MONTH), 1);
  now = new Date(NOW.getTime() + 3600_000);
  app.sendQueue.wake(user.id);
  await until(() => app.messagesRepo.findById(res.json().id)!.status === 'failed');
  t.match(JSON.parse(app.messagesRepo.findById(res.json().id)!.errorJson!), { code: 'EXPIRED' });
  t.equal(app.creditsRepo.used(user.id, MONTH), 0, 'refunded');
  t.equal(sandbox.requests.length, 0, 'never sent');
});

t.test('batch: 1,000 items with bad ones; one result per item in order, credits per item, keys of their own', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 990, options: { now: () => NOW } });
  // The worker stopped: the items stay queued while the test reads them.
  await app.ready();
  await app.sendQueue.stop();
  const items: Record<string, unknown>[] = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0
    ? { to: TO, type: 'text', text: { body: `b${i}` } }
    : { to: TO, template_name: 'hello', language: 'en', param1: 'a', param2: String(i), idempotency_key: `k${i}` }));
  items[3] = { to: '+1', type: 'text', text: { body: 'bad number' } };
  items[4] = { to: TO, template_name: 'hello', language: 'en', param1: 'a' };
  items[5] = { to: TO, type: 'text', text: { body: 'x' }, send_at: 'tomorrow' };
  const res = await post('/api/message/batch', { messages: items });
  t.equal(res.statusCode, 202);
  const { results } = res.json() as { results: { index: number; status: number; message?: { id: number; status: string }; error?: { code: string; message: string } }[] };
  t.equal(results.length, 1000);
  t.same(results.map((r) => r.index), items.map((_, i) => i));
  t.same(results[3], { index: 3, status: 400, error: { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: 'body/messages/3/to must match pattern "^[1-9][0-9]{6,14}$"' } });
  t.match(results[4], { status: 400, error: { message: 'body/messages/4/param2 is required' } });
  t.match(results[5], { status: 400, error: { message: 'body/messages/5/send_at must match format "date-time"' } });
  const queued = results.filter((r) => r.status === 202);
  const broke = results.filter((r) => r.status === 402);
  t.equal(queued.length, 990, 'as many as the allowance');
  t.equal(broke.length, 7, 'the items beyond it get 402');
  t.ok(broke.every((r) => r.index > queued.at(-1)!.index && r.error!.code === 'CREDITS_EXHAUSTED'), 'the last items');
  t.equal(app.creditsRepo.used(user.id, MONTH), 990);
  t.ok(queued.every((r) => r.message!.status === 'queued' && app.messagesRepo.findById(r.message!.id)!.status === 'queued'));
  const again = await post('/api/message/batch', { messages: [items[1], { ...(items[1] as object), param1: 'other' }] });
  t.same(again.json().results.map((r: { status: number }) => r.status), [202, 422], 'a key replays its item; reused with another body → 422');
  t.equal(again.json().results[0].message.id, results[1]!.message!.id);
  t.equal(sandbox.requests.length, 0);
  const tooMany = await post('/api/message/batch', { messages: Array.from({ length: 1001 }, () => items[0]) });
  t.equal(tooMany.statusCode, 400);
});

t.test('cancel races the worker: each message is either sent (409) or refunded (200), never both', async (t) => {
  const { app, sandbox, user, post, auth } = await sendingApp(t, { credits: 100 });
  app.usersRepo.update(user.id, { messagingRate: 50 }, app.now());
  await app.ready();
  const ids: number[] = [];
  for (let i = 0; i < 40; i++) ids.push((await post('/api/message/send', { to: TO, type: 'text', text: { body: `c${i}` } }, { prefer: 'respond-async' })).json().id);
  const answers = await Promise.all(ids.map((id) => app.inject({ method: 'DELETE', url: `/api/message/${id}`, headers: auth })));
  await until(() => ids.every((id) => ['accepted', 'failed'].includes(app.messagesRepo.findById(id)!.status)));
  const sentBodies = new Set(sandbox.requests.map((r) => JSON.parse(r.body).text.body));
  let cancelled = 0;
  ids.forEach((id, i) => {
    const row = app.messagesRepo.findById(id)!;
    if (answers[i]!.statusCode === 200) {
      cancelled += 1;
      t.equal(row.status, 'failed');
      t.notOk(sentBodies.has(`c${i}`), `c${i} cancelled and not sent`);
    } else {
      t.equal(answers[i]!.statusCode, 409);
      t.equal(row.status, 'accepted');
      t.ok(sentBodies.has(`c${i}`), `c${i} sent, not cancelled`);
    }
  });
  t.equal(sandbox.requests.length, 40 - cancelled, 'each sent at most once');
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 40 - cancelled, 'credits exact');
});

t.test('the event log: message.sent queued or scheduled at enqueue, then message.status pending, accepted or failed, gap-free', async (t) => {
  const { app, user, post, auth } = await sendingApp(t, { credits: 5, options: { now: () => NOW } });
  await app.ready();
  const queued = (await post('/api/message/send', { to: TO, type: 'text', text: { body: 'q' } }, { prefer: 'respond-async' })).json().id as number;
  await until(() => app.messagesRepo.findById(queued)!.status === 'accepted');
  const scheduled = await post('/api/message/send', { to: TO, type: 'text', text: { body: 's' }, send_at: new Date(NOW.getTime() + 60_000).toISOString() });
  t.equal(scheduled.statusCode, 202);
  const cancelled = await app.inject({ method: 'DELETE', url: `/api/message/${scheduled.json().id}`, headers: auth });
  t.equal(cancelled.statusCode, 200);
  const feed = await app.inject({ method: 'GET', url: `/api/user/${user.id}/events`, headers: auth });
  t.equal(feed.statusCode, 200);
  const { events, next_after, has_more } = feed.json() as { events: { id: number; type: string; data: { status?: string; message: { id: number; status: string } | null } }[]; next_after: number; has_more: boolean };
  t.same(events.map((e) => [e.id, e.type, e.data.status, e.data.message?.id]), [
    [1, 'message.sent', 'queued', queued],
    [2, 'message.status', 'pending', queued],
    [3, 'contact.updated', undefined, undefined], // the network's answer named the contact's wa_id
    [4, 'message.status', 'accepted', queued],
    [5, 'message.sent', 'scheduled', scheduled.json().id],
    [6, 'message.status', 'failed', scheduled.json().id],
  ]);
  t.same([next_after, has_more], [6, false]);
  t.same(events.map((e) => e.data.message?.status), ['accepted', 'accepted', undefined, 'accepted', 'failed', 'failed'], 'each event shows the message as it stands now');
});
