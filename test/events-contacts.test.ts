// Events meet contacts: every event names the listing's contact object; a contact that gains an identifier, a name or a
// username writes contact.updated, and an edit or deletion writes message.edited, each in the transaction of the change.
import t from 'tap';
import type { App } from '../src/app';
import type { UserRow } from '../src/db/tables';
import { bearer, buildTestApp, createUser } from './helper';
import { acceptedOutbound, deliverOk, envelope, fixtureText, textItem } from './fixtures/webhooks';

const PHONE_ID = '106540352242922';
const BSUID = 'US.13491208655302741918';
const SECRET = 'events-contacts-secret';
const deliver = (app: App, body: string) => deliverOk(app, body, SECRET);

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const test = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(test.app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE_ID });
  return { ...test, user };
}
interface Ev { id: number; type: string; created_at: string; data: { message: { id: number; wamid: string; text: string | null; revoked?: boolean } | null; contact: unknown; status?: string } }
async function events(app: App, user: UserRow, after = 0): Promise<Ev[]> {
  const res = await app.inject({ method: 'GET', url: `/api/user/${user.id}/events?after=${after}`, headers: bearer(app, user) });
  if (res.statusCode !== 200) throw new Error(`events: ${res.statusCode}`);
  return res.json().events as Ev[];
}
const summary = (list: Ev[]) => list.map((e) => [e.id, e.type, e.data.message?.wamid ?? null]);

t.test('a status that teaches a BSUID writes contact.updated with the contact object; every event names the same contact', async (t) => {
  const { app, user } = await setup(t);
  const wamid = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=';
  acceptedOutbound(app, user.id, wamid, '16503879439', 1750030000000);
  await deliver(app, fixtureText('bsuid_status_delivered_to_bsuid'));
  const got = await events(app, user);
  t.same(summary(got), [[1, 'message.sent', wamid], [2, 'message.status', wamid], [3, 'message.status', wamid], [4, 'contact.updated', null]]);
  const contact = { id: 1, wa_id: '16503879439', user_id: BSUID, username: null, name: null };
  t.same(got[3], { id: 4, type: 'contact.updated', created_at: got[3]!.created_at, data: { message: null, contact } }, 'contact.updated carries the contact, no message');
  t.same(got.map((e) => e.data.contact), [contact, contact, contact, contact], 'each event shows the contact as it stands when read');
  t.same(app.db.$client.prepare('SELECT type, message_id AS messageId, contact_id AS contactId FROM events WHERE seq = 4').get(),
    { type: 'contact.updated', messageId: null, contactId: 1 });
  // The same status again: nothing learned, no event.
  await deliver(app, fixtureText('bsuid_status_delivered_to_bsuid'));
  t.same(await events(app, user, 4), []);
});

t.test('a phone-less sender: a new contact writes only message.received; a new name or username then writes contact.updated first', async (t) => {
  const { app, user } = await setup(t);
  const raw = fixtureText('bsuid_inbound_text_no_phone');
  await deliver(app, raw);
  await deliver(app, raw); // a redelivery changes nothing
  const first = await events(app, user);
  t.same(summary(first), [[1, 'message.received', 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=']]);
  t.same(first[0]!.data.contact, { id: 1, wa_id: null, user_id: BSUID, username: '@realsheenanelson', name: 'Sheena Nelson' });

  const renamed = raw.replace('"Sheena Nelson"', '"Sheena N."').replace('wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=', 'wamid.second');
  await deliver(app, renamed);
  const next = await events(app, user, 1);
  t.same(summary(next), [[2, 'contact.updated', null], [3, 'message.received', 'wamid.second']]);
  t.same(next[0]!.data.contact, { id: 1, wa_id: null, user_id: BSUID, username: '@realsheenanelson', name: 'Sheena N.' });
  // The same name again: no event.
  await deliver(app, renamed.replace('wamid.second', 'wamid.third'));
  t.same(summary(await events(app, user, 3)), [[4, 'message.received', 'wamid.third']]);
});

t.test('an edit and a deletion write message.edited with the message as it now stands; a repeat writes nothing', async (t) => {
  const { app, user } = await setup(t);
  const edit = (seconds: number) => envelope(PHONE_ID, { messages: [{
    id: `wamid.edit${seconds}`, from: '15551230001', timestamp: String(seconds), type: 'edit',
    edit: { original_message_id: 'wamid.orig', message: { type: 'text', text: { body: 'hello' } } },
  }] });
  await deliver(app, envelope(PHONE_ID, { messages: [textItem('wamid.orig', '15551230001', 1767225600, 'helo')] }));
  await deliver(app, edit(1767225660));
  await deliver(app, edit(1767225660)); // the same edit again
  const revoke = envelope(PHONE_ID, { messages: [{ id: 'wamid.rev', from: '15551230001', timestamp: '1767225720', type: 'revoke', revoke: { original_message_id: 'wamid.orig' } }] });
  await deliver(app, revoke);
  await deliver(app, revoke);
  // An edit of a message nobody has: no event.
  await deliver(app, envelope(PHONE_ID, { messages: [{ id: 'wamid.x', from: '15551230001', timestamp: '1767225780', type: 'revoke', revoke: { original_message_id: 'wamid.nobody' } }] }));
  const got = await events(app, user);
  t.same(summary(got), [[1, 'message.received', 'wamid.orig'], [2, 'message.edited', 'wamid.orig'], [3, 'message.edited', 'wamid.orig']]);
  t.match(got[1]!.data.message, { text: 'hello', revoked: true }, 'the message as it stands when read');
  t.same(got[1]!.data.contact, { id: 1, wa_id: '15551230001', user_id: null, username: null, name: null });
  t.same(app.db.$client.prepare("SELECT count(*) FROM events WHERE type = 'message.edited'").pluck().get(), 2);
});
