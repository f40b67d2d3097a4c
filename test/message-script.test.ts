// What a script needs to hold a conversation: one message by id with its history, a conversation's whole history paged
// by message id, and the id of the button or list row the customer tapped.
import t from 'tap';
import type { App } from '../src/app';
import type { UserRow } from '../src/db/tables';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { acceptedOutbound, deliverOk, envelope, fixtureText, statusItem, textItem } from './fixtures/webhooks';

const PHONE_ID = '106540352242922';
const SECRET = 'script-secret';
const deliver = (app: App, body: string) => deliverOk(app, body, SECRET);
async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const test = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(test.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE_ID });
  return { ...test, user };
}
const get = (app: App, url: string, user: UserRow) => app.inject({ method: 'GET', url, headers: bearer(app, user) });

t.test('GET /api/message/{id}: the listing shape with the status history; another CLIENT gets the 404 of a missing id', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.out1', '15551230001', Date.UTC(2026, 0, 1));
  await deliver(app, envelope(PHONE_ID, { statuses: [statusItem('wamid.out1', 'delivered', Date.UTC(2026, 0, 1, 0, 0, 5) / 1000)] }));
  const res = await get(app, `/api/message/${out.id}`, user);
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.same(res.json(), {
    id: out.id, wamid: 'wamid.out1', direction: 'outbound', type: 'text', text: 'Hi', status: 'delivered', created_at: '2026-01-01T00:00:00.000Z',
    error: null, to: '15551230001', status_updated_at: '2026-01-01T00:00:05.000Z',
    statuses: [{ status: 'delivered', at: '2026-01-01T00:00:05.000Z', error: null }],
    origin: 'api',
  });
  t.equal(res.body, app.db.$client.prepare('SELECT listed_json FROM messages WHERE id = ?').pluck().get(out.id), 'the listed JSON as stored');

  const admin = await createAdmin(app);
  t.equal((await get(app, `/api/message/${out.id}`, admin)).statusCode, 200, 'an ADMIN reads any message');
  const other = await createUser(app, { email: 'other@example.com' });
  const missing = { statusCode: 404, code: 'MESSAGE_NOT_FOUND', error: 'Not Found', message: 'No message 999' };
  t.same((await get(app, '/api/message/999', user)).json(), missing);
  t.same((await get(app, `/api/message/${out.id}`, other)).json(), { ...missing, message: `No message ${out.id}` });
  for (const bad of ['0', 'abc', '-1', '1.5']) t.equal((await get(app, `/api/message/${bad}`, user)).json().code, 'VALIDATION_ERROR', bad);
  t.equal((await app.inject({ method: 'GET', url: `/api/message/${out.id}` })).statusCode, 401);
});

t.test('a conversation paged by message id: latest first page, before_id back, after_id forward, a late old message reachable', async (t) => {
  const { app, user } = await setup(t);
  const base = 1767225600; // 2026-01-01
  for (let i = 1; i <= 5; i += 1) await deliver(app, envelope(PHONE_ID, { messages: [textItem(`wamid.m${i}`, '15551230001', base + i * 60, `m${i}`)] }));
  // Delivered late: a timestamp older than all the others, stored last.
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.late', '15551230001', base - 86_400, 'late')] }));
  const contactId = app.db.$client.prepare('SELECT id FROM contacts WHERE wa_id = ?').pluck().get('15551230001') as number;
  const url = (query: string) => `/api/user/${user.id}/conversations/${contactId}/messages${query}`;
  const page = async (query: string) => {
    const res = await get(app, url(query), user);
    t.equal(res.statusCode, 200, query);
    const body = res.json() as { messages: { id: number; wamid: string }[]; next_before_id: number | null; next_after_id: number | null };
    return [body.messages.map((m) => m.wamid), body.next_before_id, body.next_after_id];
  };
  t.same(await page('?limit=2'), [['wamid.m5', 'wamid.late'], 5, null], 'the latest by id, oldest first: the late message is there');
  t.same(await page('?limit=2&before_id=5'), [['wamid.m3', 'wamid.m4'], 3, 4]);
  t.same(await page('?limit=2&before_id=3'), [['wamid.m1', 'wamid.m2'], null, 2]);
  t.same(await page('?after_id=2&limit=3'), [['wamid.m3', 'wamid.m4', 'wamid.m5'], 3, 5]);
  t.same(await page('?after_id=6'), [[], null, null]);
  t.same(await page(''), [['wamid.m1', 'wamid.m2', 'wamid.m3', 'wamid.m4', 'wamid.m5', 'wamid.late'], null, null], 'default limit 100');
  const full = (await get(app, url('?limit=1'), user)).json();
  t.same(full.messages[0], JSON.parse(app.db.$client.prepare('SELECT listed_json FROM messages WHERE wamid = ?').pluck().get('wamid.late') as string));

  const other = await createUser(app, { email: 'other@example.com' });
  t.equal((await get(app, url(''), other)).statusCode, 403, 'another CLIENT');
  t.equal((await get(app, url(''), await createAdmin(app))).statusCode, 200, 'an ADMIN');
  t.same((await get(app, `/api/user/${other.id}/conversations/${contactId}/messages`, other)).json(),
    { statusCode: 404, code: 'CONTACT_NOT_FOUND', error: 'Not Found', message: `This user has no contact ${contactId}` }, 'not this user\'s contact');
  for (const query of ['?limit=0', '?limit=501', '?before_id=0', '?after_id=x', '?extra=1', '?before_id=3&after_id=1']) {
    const bad = await get(app, url(query), user);
    t.equal(bad.statusCode, 400, query);
    t.equal(bad.json().code, 'VALIDATION_ERROR', query);
  }
  t.equal((await get(app, `/api/user/${user.id}/conversations/0/messages`, user)).statusCode, 400);
});

t.test('replies list what the customer tapped: reply {id, title} for button and list replies and template quick replies', async (t) => {
  const test = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(test.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE_ID });
  const other = await createUser(test.app, { email: 'quick@example.com', messagingPhoneNumberId: '409552778964973' });
  const { app } = test;
  for (const name of ['inbound_interactive_button_reply', 'inbound_interactive_list_reply', 'inbound_button_template_quick_reply']) {
    await deliver(app, fixtureText(name));
  }
  const replies = (owner: UserRow) => app.db.$client.prepare('SELECT listed_json FROM messages WHERE user_id = ? ORDER BY id').pluck()
    .all(owner.id).map((j) => { const m = JSON.parse(j as string); return [m.type, m.text, m.reply]; });
  t.same(replies(user), [
    ['interactive', 'Cancel', { id: 'cancel-button', title: 'Cancel' }],
    ['interactive', 'Priority Mail Express', { id: 'priority_express', title: 'Priority Mail Express' }],
  ]);
  t.same(replies(other), [['button', 'SIM', { id: 'SIM', title: 'SIM' }]]);
  // A row stored before replies were listed (its listed JSON emptied, as the upgrade does): rendered from its payload.
  app.db.$client.prepare('UPDATE messages SET listed_json = NULL').run();
  const res = await get(app, `/api/message/1`, user);
  t.same(res.json().reply, { id: 'cancel-button', title: 'Cancel' });
  t.equal(app.messagesRepo.fillListedJson() >= 0, true);
  t.same(replies(user)[0], ['interactive', 'Cancel', { id: 'cancel-button', title: 'Cancel' }], 'filled again at start-up');
});
