// POST /api/message/send with every free-form type: the exact wire body the network received, what is stored and
// listed, and every malformed shape refused with a 400 naming the field before any credit or network call.
import t from 'tap';
import { sendingApp, TO } from './fixtures/sending';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const MONTH = '2026-03';
const fixedClock = { options: { now: () => NOW } };
const QUOTED = 'wamid.HBgLMTU1NTEyMzQ1NjcVAgASGBQzQUI5';
const wire = (rest: object) => ({ messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, ...rest });

/** [name, content of the body after `to` (the wire body's after `to` too), answer type]. */
const TYPES: Array<[string, Record<string, unknown>]> = [
  ['text with preview_url', { type: 'text', text: { body: 'See https://example.com', preview_url: true } }],
  ['text as a reply', { type: 'text', text: { body: 'Yes' }, context: { message_id: QUOTED } }],
  ['image by link with caption', { type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'The parcel' } }],
  ['image by id', { type: 'image', image: { id: '1479537139650973' } }],
  ['video', { type: 'video', video: { id: '1479537139650973', caption: 'How to' } }],
  ['audio', { type: 'audio', audio: { link: 'https://example.com/a.ogg' } }],
  ['document', { type: 'document', document: { link: 'https://example.com/i.pdf', filename: 'invoice.pdf', caption: 'Invoice 42' } }],
  ['sticker', { type: 'sticker', sticker: { id: '1479537139650973' } }],
  ['location', { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Pick-up point', address: 'Alexanderplatz 1' } }],
  ['contacts', { type: 'contacts', contacts: [
    { name: { formatted_name: 'Ana Silva', first_name: 'Ana' }, phones: [{ phone: '+15551234567', type: 'CELL' }] },
    { name: { formatted_name: 'Bo Li' }, emails: [{ email: 'bo@example.com', type: 'WORK' }] }] }],
  ['interactive button', { type: 'interactive', interactive: { type: 'button', body: { text: 'Deliver tomorrow?' }, action: { buttons: [
    { type: 'reply', reply: { id: 'y', title: 'Yes' } }, { type: 'reply', reply: { id: 'n', title: 'No' } }, { type: 'reply', reply: { id: 'l', title: 'Later' } }] } } }],
  ['interactive list, 10 rows over two sections', { type: 'interactive', interactive: { type: 'list', header: { type: 'text', text: 'Slots' },
    body: { text: 'Pick a slot' }, footer: { text: 'Any time' }, action: { button: 'Slots', sections: [
      { title: 'Morning', rows: Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, title: `${8 + i}:00` })) },
      { title: 'Evening', rows: Array.from({ length: 4 }, (_, i) => ({ id: `e${i}`, title: `${18 + i}:00`, description: 'after work' })) }] } } }],
  ['interactive cta_url', { type: 'interactive', interactive: { type: 'cta_url', header: { type: 'image', image: { link: 'https://example.com/h.png' } },
    body: { text: 'Track your parcel' }, action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://example.com/t/42' } } } }],
  ['reaction', { type: 'reaction', reaction: { message_id: QUOTED, emoji: '👍' } }],
  ['reaction removed', { type: 'reaction', reaction: { message_id: QUOTED, emoji: '' } }],
];

t.test('each type: 201, one credit, and the network receives exactly the body plus messaging_product, recipient_type and to', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 100, ...fixedClock });
  for (const [index, [name, content]] of TYPES.entries()) {
    const res = await post('/api/message/send', { to: TO, ...content });
    t.equal(res.statusCode, 201, name);
    t.match(res.json(), { type: content.type, status: 'accepted', credits_remaining: 100 - index - 1 }, name);
    const received = sandbox.requests[index]!;
    t.same(JSON.parse(received.body), wire(content), `${name}: the wire body`);
    t.same(JSON.parse(app.messagesRepo.findById(res.json().id)!.payloadJson), wire(content), `${name}: stored as sent`);
  }
  t.equal(sandbox.requests.length, TYPES.length);
  t.equal(app.creditsRepo.used(user.id, MONTH), TYPES.length);
});

t.test('the body token is not part of the wire body', async (t) => {
  const { app, sandbox, user } = await sendingApp(t);
  const res = await app.inject({ method: 'POST', url: '/api/message/send', payload: {
    to: TO, type: 'sticker', sticker: { id: '77' }, token: app.issueToken(user) } });
  t.equal(res.statusCode, 201);
  t.same(JSON.parse(sandbox.requests[0]!.body), wire({ type: 'sticker', sticker: { id: '77' } }));
});

const image = (fields: object) => ({ to: TO, type: 'image', image: fields });
const reply = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'reply', reply: { id: `b${i}`, title: `B${i}` } }));
const list = (...sizes: number[]) => ({ to: TO, type: 'interactive', interactive: { type: 'list', body: { text: 'Pick' }, action: {
  button: 'Open', sections: sizes.map((n, s) => ({ title: `S${s}`, rows: Array.from({ length: n }, (_, i) => ({ id: `${s}-${i}`, title: `R${i}` })) })) } } });

const BAD: Array<[string, unknown, string]> = [
  ['both id and link', image({ id: '1', link: 'https://example.com/a.jpg' }), 'body/image must have exactly one of id or link'],
  ['neither id nor link', image({ caption: 'x' }), 'body/image must have exactly one of id or link'],
  ['caption on audio', { to: TO, type: 'audio', audio: { link: 'https://example.com/a.ogg', caption: 'x' } }, 'body/audio/caption is not an allowed property'],
  ['filename on image', image({ id: '1', filename: 'a.jpg' }), 'body/image/filename is not an allowed property'],
  ['link not http(s)', image({ link: 'ftp://example.com/a.jpg' }), 'body/image/link must match pattern "^https?://\\S+$"'],
  ['1025-char caption', image({ id: '1', caption: 'c'.repeat(1025) }), 'body/image/caption must NOT have more than 1024 characters'],
  ['unknown field in the media object', image({ id: '1', alt: 'x' }), 'body/image/alt is not an allowed property'],
  ['unknown top-level field', { ...image({ id: '1' }), priority: 'high' }, 'body/priority is not an allowed property'],
  ['content of another type beside', { ...image({ id: '1' }), text: { body: 'x' } }, 'body/text is not an allowed property'],
  ['latitude out of range', { to: TO, type: 'location', location: { latitude: 91, longitude: 0 } }, 'body/location/latitude must be <= 90'],
  ['latitude as a string', { to: TO, type: 'location', location: { latitude: '52.5', longitude: 13 } }, 'body/location/latitude must be number'],
  ['location without longitude', { to: TO, type: 'location', location: { latitude: 1 } }, 'body/location/longitude is required'],
  ['no contacts', { to: TO, type: 'contacts', contacts: [] }, 'body/contacts must NOT have fewer than 1 items'],
  ['contact without a formatted name', { to: TO, type: 'contacts', contacts: [{ name: { first_name: 'Ana' } }] }, 'body/contacts/0/name/formatted_name is required'],
  ['4 reply buttons', { to: TO, type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: { buttons: reply(4) } } },
    'body/interactive/action/buttons must NOT have more than 3 items'],
  ['no reply button', { to: TO, type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: { buttons: [] } } },
    'body/interactive/action/buttons must NOT have fewer than 1 items'],
  ['21-char button title', { to: TO, type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: {
    buttons: [{ type: 'reply', reply: { id: 'a', title: 't'.repeat(21) } }] } } }, 'body/interactive/action/buttons/0/reply/title must NOT have more than 20 characters'],
  ['11 list rows over two sections', list(6, 5), 'body/interactive/action/sections has 11 rows; at most 10 in all sections together'],
  ['11 list rows in one section', list(11), 'body/interactive/action/sections/0/rows must NOT have more than 10 items'],
  ['unknown interactive type', { to: TO, type: 'interactive', interactive: { type: 'carousel', body: { text: 'x' } } },
    'body/interactive/type must be one of: button, list, cta_url'],
  ['interactive header of an unknown type', { to: TO, type: 'interactive', interactive: { type: 'button', header: { type: 'gif' }, body: { text: 'x' },
    action: { buttons: reply(1) } } }, 'body/interactive/header/type must be one of: text, image, video, document'],
  ['interactive without body', { to: TO, type: 'interactive', interactive: { type: 'button', action: { buttons: reply(1) } } }, 'body/interactive/body is required'],
  ['reaction without message_id', { to: TO, type: 'reaction', reaction: { emoji: '👍' } }, 'body/reaction/message_id is required'],
  ['context with an unknown field', { ...image({ id: '1' }), context: { message_id: QUOTED, from: 'x' } }, 'body/context/from is not an allowed property'],
  ['context without message_id', { ...image({ id: '1' }), context: {} }, 'body/context/message_id is required'],
];

t.test('malformed shapes: 400 naming the field; no credit taken, nothing stored, no network call', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, fixedClock);
  for (const [name, payload, message] of BAD) {
    const res = await post('/api/message/send', payload);
    t.same([res.statusCode, res.json()], [400, { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message }], name);
  }
  t.equal(sandbox.requests.length, 0);
  t.equal(app.messagesRepo.findById(1), undefined);
  t.equal(app.creditsRepo.used(user.id, MONTH), 0);
});

t.test('listed: media with id or link, caption and filename; location; readable text; reply_to', async (t) => {
  const { app, user, auth, post } = await sendingApp(t, fixedClock);
  const send = async (content: Record<string, unknown>) => {
    const res = await post('/api/message/send', { to: TO, ...content });
    t.equal(res.statusCode, 201);
    return res.json().id as number;
  };
  const ids = [
    await send({ type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'The parcel' }, context: { message_id: QUOTED } }),
    await send({ type: 'document', document: { id: '555', filename: 'invoice.pdf' } }),
    await send({ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Pick-up point' } }),
    await send(TYPES[10]![1]), // interactive button
    await send(TYPES[11]![1]), // interactive list
    await send(TYPES[12]![1]), // cta_url
    await send({ type: 'reaction', reaction: { message_id: QUOTED, emoji: '👍' } }),
    await send({ type: 'reaction', reaction: { message_id: QUOTED, emoji: '' } }),
    await send(TYPES[9]![1]), // contacts
    await send({ type: 'audio', audio: { id: '9' } }),
  ];
  const res = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations`, headers: auth });
  t.equal(res.statusCode, 200);
  const listed = new Map((res.json()[0].messages as Array<Record<string, unknown>>).map((m) => [m.id, m]));
  const pick = (id: number) => {
    const { type, text, media, location, reply_to: replyTo } = listed.get(id)!;
    return { type, text, media, location, reply_to: replyTo };
  };
  t.same(pick(ids[0]!), { type: 'image', text: 'The parcel', reply_to: QUOTED, location: undefined,
    media: { id: null, mime_type: null, sha256: null, filename: null, link: 'https://example.com/a.jpg', caption: 'The parcel' } });
  t.same(pick(ids[1]!), { type: 'document', text: 'invoice.pdf', reply_to: undefined, location: undefined,
    media: { id: '555', mime_type: null, sha256: null, filename: 'invoice.pdf', link: null, caption: null, stored: false, url: null, error: null } },
    'sent by an upload\'s id: the archive keeps a copy once downloaded');
  t.same(pick(ids[2]!), { type: 'location', text: 'Pick-up point', media: undefined, reply_to: undefined,
    location: { latitude: 52.52, longitude: 13.405, name: 'Pick-up point', address: null } });
  t.equal(listed.get(ids[3]!)!.text, 'Deliver tomorrow? [Yes] [No] [Later]');
  t.equal(listed.get(ids[4]!)!.text, 'Pick a slot [Slots]');
  t.equal(listed.get(ids[5]!)!.text, 'Track your parcel [Track]');
  t.same(pick(ids[6]!), { type: 'reaction', text: '👍', reply_to: QUOTED, media: undefined, location: undefined });
  t.same(pick(ids[7]!), { type: 'reaction', text: null, reply_to: QUOTED, media: undefined, location: undefined }, 'a removal has no text');
  t.equal(listed.get(ids[8]!)!.text, 'Ana Silva, Bo Li');
  t.same(pick(ids[9]!), { type: 'audio', text: null, reply_to: undefined, location: undefined,
    media: { id: '9', mime_type: null, sha256: null, filename: null, link: null, caption: null, stored: false, url: null, error: null } });
  const filtered = await app.inject({ method: 'GET', url: `/api/user/${user.id}/conversations?type=reaction`, headers: auth });
  t.same(filtered.json()[0].messages.map((m: { id: number }) => m.id), [ids[6], ids[7]], 'filtered by the stored type');
});

t.test('Idempotency-Key: the same content in another key order is the same request', async (t) => {
  const { sandbox, post } = await sendingApp(t);
  const headers = { 'idempotency-key': 'loc-1' };
  const first = await post('/api/message/send', { to: TO, type: 'location', location: { latitude: 1, longitude: 2, name: 'A' } }, headers);
  const again = await post('/api/message/send', { location: { name: 'A', longitude: 2, latitude: 1 }, type: 'location', to: TO }, headers);
  t.equal(first.statusCode, 201);
  t.same([again.statusCode, again.json(), again.headers['idempotent-replayed']], [201, first.json(), 'true']);
  const other = await post('/api/message/send', { to: TO, type: 'location', location: { latitude: 1, longitude: 2, name: 'B' } }, headers);
  t.equal(other.statusCode, 422);
  t.equal(sandbox.requests.length, 1);
});
