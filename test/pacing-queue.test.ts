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
    to: TO, status_updated_at: null, error: null, statuses: [], send_at: NOW.toISOString(), expires_at: null, credits_remaining: 4,
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
