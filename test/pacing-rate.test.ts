import t from 'tap';
import type { RecordedRequest } from '../src/sandbox/server';
import { sendingApp, TO } from './fixtures/sending';
import { createAdmin, bearer } from './helper';

const MONTH_OF = (d: Date) => d.toISOString().slice(0, 7);

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

/** The most requests the sandbox received in any 1 s window (each window starting at a request's arrival). */
function maxPerSecond(requests: RecordedRequest[]): number {
  const times = requests.map((r) => r.at).sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + 1000) j++;
    max = Math.max(max, j - i);
  }
  return max;
}
const messagesOnly = (requests: RecordedRequest[]) => requests.filter((r) => r.path.endsWith('/messages'));

t.test('queued sends reach the network at the number’s rate, never above it in any 1 s window, each once', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100 });
  app.usersRepo.update(user.id, { messagingRate: 5 }, app.now());
  await app.ready();
  const ids: number[] = [];
  for (let i = 0; i < 16; i++) {
    const res = await post('/api/message/send', { to: TO, type: 'text', text: { body: `m${i}` } }, { prefer: 'respond-async' });
    t.equal(res.statusCode, 202);
    ids.push(res.json().id);
  }
  await until(() => ids.every((id) => app.messagesRepo.findById(id)!.status === 'accepted'));
  const sent = messagesOnly(sandbox.requests);
  t.equal(sent.length, 16, 'each sent once');
  t.same(sent.map((r) => JSON.parse(r.body).text.body), ids.map((_, i) => `m${i}`), 'in order');
  t.ok(maxPerSecond(sent) <= 5, `at most 5 in any 1 s window (saw ${maxPerSecond(sent)})`);
  t.equal(app.creditsRepo.used(user.id, MONTH_OF(app.now())), 16);
});

t.test('synchronous sends share the pace; beyond SEND_WAIT_MS → 429 SEND_QUEUE_FULL, nothing stored or charged', async (t) => {
  const { app, sandbox, user, sendText } = await sendingApp(t, { credits: 100, config: { sendWaitMs: 700 } });
  app.usersRepo.update(user.id, { messagingRate: 2 }, app.now());
  const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => sendText(`s${i}`)));
  const statuses = answers.map((a) => a.statusCode).sort();
  t.same(statuses, [201, 201, 429, 429, 429], 'two turns fit in 0.7 s at 2/s');
  const refused = answers.find((a) => a.statusCode === 429)!;
  t.equal(refused.json().code, 'SEND_QUEUE_FULL');
  t.match(refused.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal(messagesOnly(sandbox.requests).length, 2);
  t.equal(app.creditsRepo.used(user.id, MONTH_OF(app.now())), 2, 'nothing charged for the refused ones');
  t.ok(maxPerSecond(messagesOnly(sandbox.requests)) <= 2);
});

t.test('130429 with Retry-After pauses the number, then the message is sent; counted in /metrics', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100 });
  await app.ready();
  // One per second: each answer is back before the next message is claimed.
  app.usersRepo.update(user.id, { messagingRate: 1 }, app.now());
  sandbox.enqueue({ kind: 'fail', code: 130429, status: 400, retryAfter: 1 });
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push((await post('/api/message/send', { to: TO, type: 'text', text: { body: `t${i}` } }, { prefer: 'respond-async' })).json().id);
  await until(() => ids.every((id) => app.messagesRepo.findById(id)!.status === 'accepted'));
  const sent = messagesOnly(sandbox.requests);
  t.equal(sent.length, 4, 'the refused one was sent again, the others once');
  t.same(sent.map((r) => JSON.parse(r.body).text.body).sort(), ['t0', 't0', 't1', 't2'], 'only the refused one twice');
  t.ok(sent[1]!.at - sent[0]!.at >= 1000, 'nothing went out during the pause');
  t.equal(app.creditsRepo.used(user.id, MONTH_OF(app.now())), 3);
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(app, await createAdmin(app)) });
  t.match(metrics.body, /gateway_send_queue_throttled_total\{phone_number_id="106540352242922",code="130429"\} 1/);
});

t.test('a queue that is empty, or paused with messages waiting, does no work: no claim, no call, no write while it waits', async (t) => {
  const { app, sandbox, post } = await sendingApp(t, { credits: 100 });
  await app.ready();
  const quiet = async (what: string) => {
    // The run that found the queue empty or paused ends with a write of its own (its expiry check): let it end first.
    // A queue that kept looking would never settle, and fails below.
    for (let tries = 0, seen = -1; tries < 10 && app.writer.stats().writes !== seen; tries++) {
      seen = app.writer.stats().writes;
      await new Promise((r) => setTimeout(r, 300));
    }
    const before = { writes: app.writer.stats().writes, calls: sandbox.requests.length };
    await new Promise((r) => setTimeout(r, 1500));
    t.same({ writes: app.writer.stats().writes, calls: sandbox.requests.length }, before, `${what}: nothing written or sent in 1.5 s`);
  };
  const first = (await post('/api/message/send', { to: TO, type: 'text', text: { body: 'one' } }, { prefer: 'respond-async' })).json().id as number;
  await until(() => app.messagesRepo.findById(first)!.status === 'accepted');
  await quiet('every queue empty');
  sandbox.enqueue({ kind: 'fail', code: 130429, status: 400, retryAfter: 600 });
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push((await post('/api/message/send', { to: TO, type: 'text', text: { body: `p${i}` } }, { prefer: 'respond-async' })).json().id);
  // The first is answered 130429; one handed to the network just before that answer came may still have gone out.
  const statuses = () => ids.map((id) => app.messagesRepo.findById(id)!.status);
  await until(() => messagesOnly(sandbox.requests).length >= 2 && statuses().every((s) => s === 'queued' || s === 'accepted'));
  t.ok(statuses().filter((s) => s === 'queued').length >= 3, `messages wait in the paused queue (${statuses().join(', ')})`);
  await quiet('the number paused for 600 s with messages waiting');
});

t.test('while the network holds its answers, the queue claims no more than the rate and a claim lead ahead: a pause or a stop holds the rest back', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100, config: { messagingTimeoutMs: 10_000 } });
  await app.ready();
  app.usersRepo.update(user.id, { messagingRate: 10 }, app.now());
  for (let i = 0; i < 10; i++) sandbox.enqueue({ kind: 'accept', delayMs: 4000 });
  const messages = Array.from({ length: 40 }, (_, i) => ({ to: TO, type: 'text', text: { body: `h${i}` } }));
  t.equal((await post('/api/message/batch', { messages })).statusCode, 202);
  // The first 10 calls wait 4 s for their answers; the 11th may leave only once the 1st is answered (its 1 s window).
  // 1.5 s after the 10th reached the network, 15 more slots have passed: each would be a message handed over.
  await until(() => messagesOnly(sandbox.requests).length === 10);
  await new Promise((r) => setTimeout(r, 1500));
  const claimed = app.db.$client.prepare("SELECT count(*) FROM messages WHERE user_id = ? AND status = 'pending'").pluck().get(user.id) as number;
  t.ok(claimed <= 20, `at most 10 at the network and a few claimed ahead (${claimed} claimed), not every due message handed over`);
  await until(() => (app.db.$client.prepare("SELECT count(*) FROM messages WHERE user_id = ? AND status = 'accepted'").pluck().get(user.id) as number) === 40);
  t.equal(messagesOnly(sandbox.requests).length, 40, 'each sent once');
});

t.test('131056 holds only that recipient; other recipients go on', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100 });
  app.usersRepo.update(user.id, { messagingRate: 1 }, app.now());
  await app.ready();
  sandbox.enqueue({ kind: 'fail', code: 131056, status: 400 });
  const OTHER = '15557654321';
  const ids: number[] = [];
  for (const [to, body] of [[TO, 'a1'], [TO, 'a2'], [OTHER, 'b1']] as const) {
    ids.push((await post('/api/message/send', { to, type: 'text', text: { body } }, { prefer: 'respond-async' })).json().id);
  }
  await until(() => ids.every((id) => app.messagesRepo.findById(id)!.status === 'accepted'));
  const sent = messagesOnly(sandbox.requests).map((r) => JSON.parse(r.body).text.body);
  t.same(sent, ['a1', 'b1', 'a1', 'a2'], 'b1 went while the first recipient was held; its messages kept their order');
  const gap = messagesOnly(sandbox.requests)[2]!.at - messagesOnly(sandbox.requests)[0]!.at;
  t.ok(gap >= 6000, 'the recipient was held 6 s');
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(app, await createAdmin(app)) });
  t.match(metrics.body, /gateway_send_queue_throttled_total\{phone_number_id="106540352242922",code="131056"\} 1/);
});

t.test('131048 pauses the number: the message waits queued, the pause is in /metrics', async (t) => {
  const { app, sandbox, post } = await sendingApp(t, { credits: 100 });
  await app.ready();
  sandbox.enqueue({ kind: 'fail', code: 131048, status: 400 });
  const id = (await post('/api/message/send', { to: TO, type: 'text', text: { body: 'spam?' } }, { prefer: 'respond-async' })).json().id;
  await until(() => messagesOnly(sandbox.requests).length === 1 && app.messagesRepo.findById(id)!.status === 'queued');
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(app, await createAdmin(app)) });
  t.match(metrics.body, /gateway_send_queue_throttled_total\{phone_number_id="106540352242922",code="131048"\} 1/);
  t.match(metrics.body, /gateway_send_queue_depth\{phone_number_id="106540352242922"\} 1/);
  const paused = Number(/gateway_send_queue_paused_until_seconds\{phone_number_id="106540352242922"\} ([0-9.e+]+)/.exec(metrics.body)?.[1]);
  t.ok(paused * 1000 > Date.now() + 30_000, 'paused for a while');
  t.equal(app.messagesRepo.findById(id)!.errorJson, null, 'not failed');
});

for (const addressed of ['to', 'contact_id'] as const) t.test(`replies (a contact who wrote within 24 h, the reply addressed by ${addressed}) go before template bulk of the same number`, async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100 });
  app.usersRepo.update(user.id, { messagingRate: 1 }, app.now());
  await app.writer.write(() => app.messagesRepo.insertInbound({
    userId: user.id, contactWaId: TO, contactName: 'Ana', wamid: 'wamid.inbound-1', type: 'text', text: 'where is my order?',
    payloadJson: '{}', createdAt: Date.now() - 60_000,
  }));
  const BULK = '15557654321';
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await post('/api/message/send2', { to: BULK, template_name: 'promo', language: 'en', param1: 'a', param2: `p${i}` }, { prefer: 'respond-async' })).json().id);
  }
  const contactId = app.db.$client.prepare('SELECT id FROM contacts WHERE user_id = ? AND wa_id = ?').pluck().get(user.id, TO) as number;
  const recipient = addressed === 'to' ? { to: TO } : { contact_id: contactId };
  ids.push((await post('/api/message/send', { ...recipient, type: 'text', text: { body: 'on its way' } }, { prefer: 'respond-async' })).json().id);
  await until(() => ids.every((id) => app.messagesRepo.findById(id)!.status === 'accepted'));
  const order = messagesOnly(sandbox.requests).map((r) => JSON.parse(r.body)).map((b) => b.text?.body ?? b.template.components[0].parameters[1].text);
  t.same(order, ['p0', 'on its way', 'p1', 'p2'], 'the reply overtook the bulk still waiting');
});

t.test('a contact who last wrote more than 24 h ago is bulk: its message keeps its place', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100 });
  app.usersRepo.update(user.id, { messagingRate: 1 }, app.now());
  await app.writer.write(() => app.messagesRepo.insertInbound({
    userId: user.id, contactWaId: TO, contactName: 'Ana', wamid: 'wamid.inbound-old', type: 'text', text: 'hello',
    payloadJson: '{}', createdAt: Date.now() - 25 * 3600 * 1000,
  }));
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) {
    ids.push((await post('/api/message/send2', { to: '15557654321', template_name: 'promo', language: 'en', param1: 'a', param2: `p${i}` }, { prefer: 'respond-async' })).json().id);
  }
  ids.push((await post('/api/message/send', { to: TO, type: 'text', text: { body: 'late reply' } }, { prefer: 'respond-async' })).json().id);
  await until(() => ids.every((id) => app.messagesRepo.findById(id)!.status === 'accepted'));
  const order = messagesOnly(sandbox.requests).map((r) => JSON.parse(r.body)).map((b) => b.text?.body ?? b.template.components[0].parameters[1].text);
  t.same(order, ['p0', 'p1', 'late reply'], 'no window open: sent in the order queued');
});
