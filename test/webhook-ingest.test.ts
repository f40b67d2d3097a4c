// Every real payload of test/fixtures/webhooks/ through the route, asserting exactly what it stored.
import t from 'tap';
import { buildTestApp, createUser } from './helper';
import { acceptedOutbound, deliver, fixtureNames, fixtureText, historyOf, inboxRows, messageByWamid, messageCount } from './fixtures/webhooks';

const SECRET = 'fixture-secret';
type Err = { code: number; title: string; details: string };

interface InboundExpectation {
  phone: string; wamid: string; type: string; text: string | null; at: number; contact: [string | null, string | null];
  media?: object; location?: object; replyTo?: string; error?: Err;
}
interface StatusExpectation { phone: string; wamid: string; status: string; at: number; error?: Err }

const BINDA = ['1111111111111', 'Mauricio Binda'] as [string, string];
const TEST_NAME = ['972987654321', 'Test Name'] as [string, string];
const SHEENA = ['16505551234', 'Sheena Nelson'] as [string, string];
const B_ID = 'wamid.nBgN6TUyN2k5NzAzM5kzNhUCABI8FDNFQjAxQkE5REI4NEUzQ5Y5QTNgAA==';

const INBOUND: Record<string, InboundExpectation> = {
  inbound_text: { phone: '409552778964973', wamid: B_ID, type: 'text', text: 'hi everyone!', at: 1672947578, contact: BINDA },
  inbound_text_reply_with_context: { phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'text', text: 'replied text', at: 1697044746, contact: TEST_NAME, replyTo: 'wamid.xyzxyz==' },
  inbound_image: {
    phone: '409552778964973', wamid: 'wamid.HBgODE0NDQwANNTTBGRjkUyNzkzNhUCABIYFDNF5NzAzMDkQjBEQ3NjdBA==', type: 'image', text: null, at: 1673032525, contact: BINDA,
    media: { id: '8472976218001204', mime_type: 'image/jpeg', sha256: 'ciJuSxU7RLnnFz3cNcasdL7UQKt9e1yj/3u+Rhsabv0=', filename: null },
  },
  inbound_video_caption: {
    phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'video', text: 'caption', at: 1697044362, contact: TEST_NAME,
    media: { id: '765756756', mime_type: 'video/mp4', sha256: 'Jh+2ij6PzUv/J2y+grrtegr/ZMzRxkEPwc24Oyib4s03w9Jc=', filename: null },
  },
  inbound_document_caption_filename_forwarded: {
    phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'document', text: 'caption', at: 1697043666, contact: TEST_NAME,
    media: { id: '1234567890987654321', mime_type: 'application/pdf', sha256: 'grwfwe/ZPx0wAbdfbdeFUNItPZ0RylL8gGUvdt3YFqc18SY=', filename: 'filename.pdf' },
  },
  inbound_location_coordinates_only: {
    phone: '409552778964973', wamid: 'wamid.HBgNNVENjUTzk5NzAzMUyNDkzIYFDNBMERNhUCABBMkYzNjhFQzzNEUwAA==', type: 'location', text: null, at: 1673641462, contact: BINDA,
    location: { latitude: -10.93941311633, longitude: -10.606395436721, name: null, address: null },
  },
  inbound_location_named_place: {
    phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'location', text: 'Facebook HQ', at: 1697044557, contact: TEST_NAME,
    location: { latitude: 37.4611978, longitude: -122.2164385, name: 'Facebook HQ', address: '1 Hacker Way, Menlo Park, CA 94025' },
  },
  inbound_contacts: { phone: '409552778964973', wamid: 'wamid.HBgNNEMkNETUyNUCDkzNABIYFDNFQjA1zk5NzAzMhQjA5OTFQjNFQkU3AA==', type: 'contacts', text: 'Person Ok', at: 1673641462, contact: BINDA },
  inbound_interactive_button_reply: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTZBQzg0MzQ4QjRCM0NGNkVGOAA=', type: 'interactive', text: 'Cancel', at: 1750025136, contact: SHEENA,
    replyTo: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3MEM2RUJFNkI0RENGQTVDRjUA',
  },
  inbound_interactive_list_reply: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=', type: 'interactive', text: 'Priority Mail Express', at: 1749854575, contact: SHEENA,
    replyTo: 'wamid.HBgLMTQxMjU1NTA4MjkVAgASGBQzQUNCNjk5RDUwNUZGMUZEM0VBRAA=',
  },
  inbound_button_template_quick_reply: { phone: '409552778964973', wamid: B_ID, type: 'button', text: 'SIM', at: 1673023653, contact: BINDA, replyTo: B_ID },
  inbound_reaction: { phone: '409552778964973', wamid: B_ID, type: 'reaction', text: '👍', at: 1673026587, contact: BINDA, replyTo: B_ID },
  inbound_reaction_removed_empty_emoji: { phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'reaction', text: null, at: 1697044456, contact: TEST_NAME, replyTo: 'wamid.yzxyzx=' },
  inbound_order: { phone: '1122334455667', wamid: 'wamid.xyzxyz', type: 'order', text: null, at: 1697044668, contact: TEST_NAME },
  inbound_system_user_changed_number: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTk4MzU1NTE5NzQVAgASGAoxMTgyMDg2MjY3AA==', type: 'system', at: 1750269342,
    // The contact it happened to now has the new number (the old one is kept as an alias).
    text: 'User Sheena Nelson changed from 16505551234 to 12195555358', contact: ['12195555358', null],
  },
  // A user without a shared phone number: the contact has the user id only.
  bsuid_inbound_text_no_phone: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=', type: 'text',
    text: 'Does it come in another color?', at: 1749416383, contact: [null, 'Sheena Nelson'],
  },
  inbound_unsupported_131051: {
    phone: '409552778964973', wamid: B_ID, type: 'unsupported', text: null, at: 1673026174, contact: BINDA,
    error: { code: 131051, title: 'Message type unknown', details: 'Message type is currently not supported.' },
  },
  multi_messages_same_change_duplicate_ids: { phone: '1234567890', wamid: 'external_id', type: 'text', text: 'Hello World', at: 1454119029, contact: ['5678', 'Kerry Fisher'] },
};

const STATUSES: Record<string, StatusExpectation> = {
  status_sent_cbp: { phone: '409552778964973', wamid: B_ID, status: 'sent', at: 1673020317 },
  status_delivered_cbp: { phone: '409552778964973', wamid: B_ID, status: 'delivered', at: 1673020317 },
  status_read: { phone: '1122334455667', wamid: 'wamid.xyzxyz', status: 'read', at: 1689380458 },
  status_read_v25_with_user_id: { phone: '123456123', wamid: 'ABGGFlA5Fpa', status: 'read', at: 1504902988 },
  bsuid_status_delivered_to_bsuid: { phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=', status: 'delivered', at: 1750030073 },
  bsuid_status_failed_phone_send_no_contacts: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=', status: 'failed', at: 1750030073,
    error: { code: 131049, title: 'This message was not delivered to maintain healthy ecosystem engagement.', details: 'In order to maintain a healthy ecosystem engagement, the message failed to be delivered.' },
  },
  status_failed_131047_reengagement: {
    phone: '109999999999999', wamid: 'wamid.HBgNN5NzAzMDkTUyNzkzNhUEjA1MjUwNCAUIyNEYUQ0OTVGNTY0MwA=', status: 'failed', at: 1682651887,
    error: { code: 131047, title: 'Re-engagement message', details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
  },
  status_failed_130472_experiment: {
    phone: '1122334455667', wamid: 'wamid.xyzxyz', status: 'failed', at: 1689380458,
    error: { code: 130472, title: "User's number is part of an experiment", details: "Failed to send message because this user's phone number is part of an experiment" },
  },
  status_failed_131049_ecosystem: {
    phone: '106540352242922', wamid: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI0QUQ2MjA4NEYyRkExNjMyREUA', status: 'failed', at: 1751142888,
    error: { code: 131049, title: 'This message was not delivered to maintain healthy ecosystem engagement.', details: 'In order to maintain a healthy ecosystem engagement, the message failed to be delivered.' },
  },
};

async function appFor(t: Parameters<typeof buildTestApp>[0], phone: string) {
  const { app } = await buildTestApp(t, { messagingAppSecret: SECRET });
  const user = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: phone });
  return { app, user };
}

/** The message objects of the fixture's first change, as the network sent them. */
const wireMessages = (raw: string): unknown[] => JSON.parse(raw).entry[0].changes[0].value.messages;

t.test('every fixture has an expectation', async (t) => {
  t.same(fixtureNames(), [...Object.keys(INBOUND), ...Object.keys(STATUSES), 'value_errors_130429_rate_limit'].sort());
});

for (const [name, want] of Object.entries(INBOUND)) {
  t.test(`${name}: stored as one inbound message`, async (t) => {
    const { app, user } = await appFor(t, want.phone);
    const raw = fixtureText(name);
    const res = await deliver(app, raw, SECRET);
    t.equal(res.statusCode, 200);
    t.same(res.json(), { status: 'received' });

    const [event, ...more] = inboxRows(app);
    t.same(more, []);
    t.equal(event!.rawBody, raw, 'raw body kept byte for byte');
    t.equal(event!.state, 'processed');
    t.equal(event!.error, null);

    t.equal(messageCount(app), 1);
    const row = messageByWamid(app, want.wamid)!;
    t.match(row, { userId: user.id, direction: 'inbound', type: want.type, text: want.text, status: 'received', createdAt: want.at * 1000 });
    t.same(row.mediaJson && JSON.parse(row.mediaJson), want.media ?? null, 'media');
    t.same(row.locationJson && JSON.parse(row.locationJson), want.location ?? null, 'location');
    t.equal(row.replyTo, want.replyTo ?? null, 'reply_to');
    t.same(row.errorJson && JSON.parse(row.errorJson), want.error ?? null, 'error');
    t.same(JSON.parse(row.payloadJson), wireMessages(raw)[0], 'raw message object');

    const conversation = app.messagesRepo.conversationOf(row.id)!;
    t.match(conversation, { userId: user.id, contactWaId: want.contact[0], contactName: want.contact[1], lastInboundAt: want.at * 1000, lastMessageAt: want.at * 1000 });
  });
}

for (const [name, want] of Object.entries(STATUSES)) {
  t.test(`${name}: moves the outbound message and appends its history`, async (t) => {
    const { app, user } = await appFor(t, want.phone);
    const message = acceptedOutbound(app, user.id, want.wamid);
    t.equal((await deliver(app, fixtureText(name), SECRET)).statusCode, 200);

    t.match(inboxRows(app), [{ state: 'processed', error: null }]);
    const row = app.messagesRepo.findById(message.id)!;
    t.equal(row.status, want.status);
    t.equal(row.statusUpdatedAt, want.at * 1000);
    t.same(row.errorJson && JSON.parse(row.errorJson), want.error ?? null);
    t.same(historyOf(app, message.id), [[want.status, want.at * 1000, want.error ?? null]]);
    t.equal(app.messagesRepo.orphanCount(), 0);
  });

  t.test(`${name}: before the send stored its wamid, kept and applied when it does`, async (t) => {
    const { app, user } = await appFor(t, want.phone);
    t.equal((await deliver(app, fixtureText(name), SECRET)).statusCode, 200);
    t.match(inboxRows(app), [{ state: 'processed', error: null }]);
    t.equal(app.messagesRepo.orphanCount(), 1);

    const message = acceptedOutbound(app, user.id, want.wamid);
    t.equal(message.status, want.status);
    t.same(historyOf(app, message.id), [[want.status, want.at * 1000, want.error ?? null]]);
    t.equal(app.messagesRepo.orphanCount(), 0);
  });
}

t.test('value_errors_130429_rate_limit: stored, acknowledged, the network error recorded on the event', async (t) => {
  const { app } = await appFor(t, '106540352242922');
  const raw = fixtureText('value_errors_130429_rate_limit');
  t.equal((await deliver(app, raw, SECRET)).statusCode, 200);
  const [event] = inboxRows(app);
  t.equal(event!.rawBody, raw);
  t.equal(event!.state, 'processed');
  t.equal(event!.error, 'entry[0].changes[0].errors[0]: the network reported '
    + '{"code":130429,"title":"Rate limit hit","details":"Message failed to send because there were too many messages sent from this phone number in a short period of time"}');
  t.equal(messageCount(app), 0);
});
