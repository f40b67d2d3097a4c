// Contacts from callbacks (real payload shapes): phone-less senders, BSUIDs learned from statuses, never-merge,
// identity changes, groups, standby and echoes, edits and deletions, pricing, millisecond timestamps.
import t from 'tap';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import type { App } from '../src/app';
import type { UserRow } from '../src/db/tables';
import { acceptedOutbound, deliver as deliverSigned, envelope, fixtureText, inboxRows, messageByWamid, messageCount, textItem } from './fixtures/webhooks';

const PHONE_ID = '106540352242922';
const BSUID = 'US.13491208655302741918';
const PARENT = 'US.ENT.11815799212886844830';
const SECRET = 'contacts-secret';
const deliver = (app: App, body: string) => deliverSigned(app, body, SECRET);

async function setup(t: Parameters<typeof buildTestApp>[0], phoneNumberId = PHONE_ID) {
  const test = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(test.app, { email: 'owner@example.com', messagingPhoneNumberId: phoneNumberId, monthlyCredits: 10 });
  return { ...test, user };
}

interface Listed {
  contact: { id: number; wa_id: string | null; user_id: string | null; username: string | null; name: string | null };
  message_count: number; service_window_expires_at: string | null;
  messages: { wamid: string; type: string; text: string | null; direction: string; origin?: string; pricing?: unknown;
    statuses?: { status: string; pricing?: unknown }[]; edited_at?: string; edits?: unknown[]; revoked?: boolean; created_at: string }[];
}
async function list(app: App, user: UserRow, query = ''): Promise<Listed[]> {
  const res = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations${query}`, headers: bearer(app, user) });
  if (res.statusCode !== 200) throw new Error(`listing ${query}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return res.json() as Listed[];
}
const notes = (app: App): (string | null)[] => inboxRows(app).map((row) => row.error);
const contactRow = (app: App, id: number) => app.db.$client.prepare(
  'SELECT wa_id AS waId, bsuid, parent_bsuid AS parentBsuid, username, name, aliases_json AS aliases FROM contacts WHERE id = ?').get(id);
const item = (fields: Record<string, unknown>, seconds = 1767225600) =>
  ({ id: `wamid.${Math.random().toString(36).slice(2)}`, timestamp: String(seconds), type: 'text', text: { body: 'hi' }, ...fields });
const change = (field: string, value: Record<string, unknown>) => JSON.stringify({
  object: 'whatsapp_business_account',
  entry: [{ id: 'waba', changes: [{ field, value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: PHONE_ID }, ...value } }] }],
});

t.test('a user without a shared phone number (the network\'s own example) is listed, named and filterable', async (t) => {
  const { app, user } = await setup(t);
  t.equal((await deliver(app, fixtureText('bsuid_inbound_text_no_phone'))).statusCode, 200);
  t.same(notes(app), [null], 'no note: nothing refused');
  const [conversation] = await list(app, user);
  t.strictSame(conversation!.contact, { id: conversation!.contact.id, wa_id: null, user_id: BSUID, username: '@realsheenanelson', name: 'Sheena Nelson' });
  t.match(conversation!.messages, [{ direction: 'inbound', type: 'text', text: 'Does it come in another color?', created_at: '2025-06-08T20:59:43.000Z' }]);
  t.equal(conversation!.service_window_expires_at, '2025-06-09T20:59:43.000Z', 'the 24 h window is the contact\'s');
  t.match(contactRow(app, conversation!.contact.id), { parentBsuid: PARENT });
  for (const query of [`?contact=${BSUID}`, `?contact=id:${conversation!.contact.id}`]) {
    t.equal((await list(app, user, query)).length, 1, query);
  }
  t.same(await list(app, user, '?contact=16505551234'), []);
  const other = await createUser(app, { email: 'other@example.com' });
  t.same(await list(app, other, `?contact=id:${conversation!.contact.id}`), [], 'another user\'s contact id finds nothing');
});

t.test('phone and BSUID on one contact; a later phone-less message joins it; a BSUID in `from` is a BSUID', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, {
    contacts: [{ profile: { name: 'Ana' }, wa_id: '15551230001', user_id: BSUID }], messages: [textItem('wamid.a1', '15551230001', 1767225600, 'one')],
  }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.a2', from: '', from_user_id: BSUID }, 1767225660)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.b1', from: 'US.777' }, 1767225720)] }));
  const body = await list(app, user);
  t.equal(body.length, 2);
  const ana = body.find((c) => c.contact.wa_id === '15551230001')!;
  t.match(ana, { contact: { wa_id: '15551230001', user_id: BSUID, name: 'Ana' }, message_count: 2 });
  t.same(ana.messages.map((m) => m.wamid), ['wamid.a1', 'wamid.a2']);
  t.match(body.find((c) => c.contact.wa_id === null), { contact: { user_id: 'US.777' }, messages: [{ wamid: 'wamid.b1' }] });
  t.same(notes(app), [null, null, null]);
});

t.test('empty strings are absent; no phone and no BSUID is a bad item; a malformed user_id beside a phone is noted and ignored', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [
    item({ id: 'wamid.none', from: '', from_user_id: '' }),
    item({ id: 'wamid.bad', from: '15551230009', from_user_id: 'not-a-bsuid' }),
  ] }));
  t.equal(messageByWamid(app, 'wamid.none'), undefined);
  t.equal(notes(app)[0], 'entry[0].changes[0].messages[0]: neither a phone number nor a user id: not stored\n'
    + 'entry[0].changes[0].messages[1]: from_user_id "not-a-bsuid" is not a user id; ignored');
  t.match(await list(app, user), [{ contact: { wa_id: '15551230009', user_id: null }, messages: [{ wamid: 'wamid.bad' }] }]);
});

t.test('never merged: a phone and a BSUID of two contacts keep apart; the message goes to the phone\'s contact', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.p', '15551230001', 1767225600, 'by phone')] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.u', from_user_id: BSUID }, 1767225660)] }));
  await deliver(app, envelope(PHONE_ID, {
    contacts: [{ profile: { name: 'Ana' }, wa_id: '15551230001', user_id: BSUID }], messages: [textItem('wamid.both', '15551230001', 1767225720, 'both')],
  }));
  const body = await list(app, user);
  t.same(body.map((c) => [c.contact.wa_id, c.contact.user_id, c.messages.map((m) => m.wamid)]), [
    ['15551230001', null, ['wamid.p', 'wamid.both']],
    [null, BSUID, ['wamid.u']],
  ]);
  t.match(notes(app)[2], /messages\[0\]: number 15551230001 belongs to contact \d+ and user id US\.13491208655302741918 to contact \d+; kept apart/);
});

t.test('statuses teach the contact its BSUID, under both names of the parent field; pricing kept per entry and on the message', async (t) => {
  const { app, user } = await setup(t, '123456123');
  const sent = acceptedOutbound(app, user.id, 'ABGGFlA5Fpa', '16315551181');
  t.equal((await deliver(app, fixtureText('status_read_v25_with_user_id'))).statusCode, 200);
  t.match(app.messagesRepo.conversationOf(sent.id), { contactWaId: '16315551181', contactBsuid: BSUID, contactParentBsuid: 'US.11815799212886844830' });

  const second = await setup(t);
  const wamid = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=';
  const out = acceptedOutbound(second.app, second.user.id, wamid, '16505551234');
  t.equal((await deliver(second.app, fixtureText('bsuid_status_delivered_to_bsuid'))).statusCode, 200);
  t.match(second.app.messagesRepo.conversationOf(out.id), { contactWaId: '16505551234', contactBsuid: BSUID, contactParentBsuid: PARENT });
  const pricing = { billable: true, pricing_model: 'PMP', type: 'regular', category: 'marketing' };
  const [conversation] = await list(second.app, second.user);
  t.match(conversation!.messages[0], { status: 'delivered', origin: 'api', pricing, statuses: [{ status: 'delivered', pricing }] });
  // A status with another pricing later does not replace the message's.
  await deliver(second.app, change('messages', { statuses: [{ id: wamid, status: 'read', timestamp: '1750030080', pricing: { ...pricing, category: 'authentication-international' } }] }));
  const [again] = await list(second.app, second.user);
  t.same(again!.messages[0]!.pricing, pricing);
  t.same(again!.messages[0]!.statuses!.map((s) => s.pricing), [pricing, { ...pricing, category: 'authentication-international' }]);
});

t.test('identity changes keep one conversation: a new number, a new user id; the old ones stay as aliases', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.before', '16505551234', 1750269000, 'before')] }));
  t.equal((await deliver(app, fixtureText('inbound_system_user_changed_number'))).statusCode, 200);
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.after', '12195555358', 1750269400, 'after')] }));
  const [conversation, ...others] = await list(app, user);
  t.same(others, []);
  t.same(conversation!.messages.map((m) => [m.type, m.text]), [
    ['text', 'before'], ['system', 'User Sheena Nelson changed from 16505551234 to 12195555358'], ['text', 'after']]);
  t.match(contactRow(app, conversation!.contact.id), { waId: '12195555358', aliases: '["16505551234"]' });

  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.u1', from_user_id: 'US.1111' }, 1750269500)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({
    id: 'wamid.sys', from_user_id: 'US.2222', type: 'system', text: undefined,
    system: { type: 'user_changed_user_id', previous_user_id: 'US.1111', user_id: 'US.2222' },
  }, 1750269600)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.u2', from_user_id: 'US.2222' }, 1750269700)] }));
  const changed = (await list(app, user)).find((c) => c.contact.user_id === 'US.2222')!;
  t.same(changed.messages.map((m) => [m.wamid, m.text]), [['wamid.u1', 'hi'], ['wamid.sys', 'Their user id changed from US.1111 to US.2222'], ['wamid.u2', 'hi']]);
  t.match(contactRow(app, changed.contact.id), { bsuid: 'US.2222', aliases: '["US.1111"]' });
  t.equal((await list(app, user, '?contact=US.1111')).length, 0, 'the old id names no contact any more');
});

t.test('group messages are noted, never listed in a one-to-one conversation', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.g', from: '15551230001', group_id: 'G123' })] }));
  t.equal(messageCount(app), 0);
  t.same(await list(app, user), []);
  t.equal(notes(app)[0], 'entry[0].changes[0].messages[0]: group message (group_id G123): not listed in a one-to-one conversation');
});

t.test('standby callbacks are applied like ordinary ones; echoes are listed as outbound with their origin and never charged', async (t) => {
  const { app, user } = await setup(t);
  const out = acceptedOutbound(app, user.id, 'wamid.out', '15551230001');
  await deliver(app, change('standby', { standby: {
    messages: [item({ id: 'wamid.sb', from: '15551230001' }, 1767225600)],
    statuses: [{ id: 'wamid.out', status: 'delivered', timestamp: '1767225601', recipient_id: '15551230001' }],
    message_echoes: [{ from: '15550001111', to: '15551230001', id: 'wamid.agent', timestamp: '1767225602', type: 'text', text: { body: 'Agent here' } }],
  } }));
  await deliver(app, change('smb_message_echoes', { message_echoes: [
    { from: '15550001111', to: '15551230001', id: 'wamid.app', timestamp: '1767225603000', type: 'text', text: { body: 'From the phone' } }] }));
  t.same(notes(app), [null, null]);
  t.equal(app.messagesRepo.findById(out.id)!.status, 'delivered');
  const [conversation] = await list(app, user);
  t.same(conversation!.messages.map((m) => [m.wamid, m.direction, m.origin ?? null, m.text, m.created_at]), [
    ['wamid.out', 'outbound', 'api', 'Hi', '2020-09-13T12:26:40.000Z'],
    ['wamid.sb', 'inbound', null, 'hi', '2026-01-01T00:00:00.000Z'],
    ['wamid.agent', 'outbound', 'agent', 'Agent here', '2026-01-01T00:00:02.000Z'],
    ['wamid.app', 'outbound', 'business_app', 'From the phone', '2026-01-01T00:00:03.000Z'],
  ], 'a timestamp of 10^12 or more is milliseconds');
  t.equal(app.creditsRepo.used(user.id, '2026-01'), 0, 'echoes cost no credit');
});

t.test('edits replace the text (earlier text kept), deletions mark the original; neither is listed as a message', async (t) => {
  const { app, user } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.orig', '15551230001', 1767225600, 'helo')] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({
    id: 'wamid.edit', from: '15551230001', type: 'edit', text: undefined,
    edit: { original_message_id: 'wamid.orig', message: { type: 'text', text: { body: 'hello' } } },
  }, 1767225660)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.gone', '15551230001', 1767225700, 'oops')] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.rev', from: '15551230001', type: 'revoke', text: undefined, revoke: { original_message_id: 'wamid.gone' } }, 1767225720)] }));
  const [conversation] = await list(app, user);
  t.equal(conversation!.message_count, 2);
  t.match(conversation!.messages[0], { wamid: 'wamid.orig', text: 'hello', edited_at: '2026-01-01T00:01:00.000Z', edits: [{ text: 'helo', at: '2026-01-01T00:00:00.000Z' }] });
  t.match(conversation!.messages[1], { wamid: 'wamid.gone', text: 'oops', revoked: true });
  t.equal(conversation!.messages[0]!.revoked, undefined);
});

t.test('request_welcome, flow replies, call permission answers and vcards have readable text', async (t) => {
  const { app } = await setup(t);
  await deliver(app, envelope(PHONE_ID, { messages: [
    item({ id: 'wamid.w', from: '15551230001', type: 'request_welcome', text: undefined }),
    item({ id: 'wamid.f', from: '15551230001', type: 'interactive', text: undefined, interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: '{}' } } }),
    item({ id: 'wamid.c', from: '15551230001', type: 'interactive', text: undefined, interactive: { type: 'call_permission_reply', call_permission_reply: { response: 'accept', is_permanent: false } } }),
    item({ id: 'wamid.v', from: '15551230001', type: 'contacts', text: undefined, contacts: [{ vcard: 'BEGIN:VCARD\nFN:Bruno Costa\nEND:VCARD', origin: 'shared' }] }),
  ] }));
  t.same(['wamid.w', 'wamid.f', 'wamid.c', 'wamid.v'].map((w) => messageByWamid(app, w)!.text),
    ['Opened the chat (welcome message requested)', 'Sent', 'Call permission granted', 'Bruno Costa']);
});

t.test('the admin thread names a contact by name, else @username, else +number, else the end of its user id, and lists its identifiers', async (t) => {
  const { app, user } = await setup(t);
  const admin = await createAdmin(app);
  await deliver(app, fixtureText('bsuid_inbound_text_no_phone'));
  await deliver(app, envelope(PHONE_ID, { contacts: [{ profile: { username: '@bruno' }, user_id: 'US.5555' }], messages: [item({ id: 'wamid.u', from_user_id: 'US.5555' }, 1767225600)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.p', from: '15551230001' }, 1767225700)] }));
  await deliver(app, envelope(PHONE_ID, { messages: [item({ id: 'wamid.x', from_user_id: 'US.98765432109' }, 1767225800)] }));
  const page = async (query = '') => (await app.inject({
    method: 'GET', url: `/admin/user/${user.id}/conversation-thread${query}`, headers: { cookie: `token=${app.issueToken(admin)}` },
  })).body;
  const html = await page();
  for (const name of ['Sheena Nelson', '@bruno', '+15551230001', 'user · 432109']) t.match(html, `<span class="contact-name">${name}</span>`);
  const sheena = await page(`?contact=${BSUID}`);
  t.match(sheena, `@realsheenanelson · user id ${BSUID} · parent user id ${PARENT}`);
});
