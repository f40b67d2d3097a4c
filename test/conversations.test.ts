// GET /api/user/{id}/conversations (SPEC §7): who may read, the exact answer, filters, order, caps, paging.
import t from 'tap';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { App } from '../src/app';
import { ConversationList } from '../schemas/conversations';
import { isoUtc } from '../src/support/iso-utc';
import { SLOT_BYTES, SLOTS } from '../src/listing/listing-protocol';
import { USER_TURNS } from '../src/listing/conversations-reader';
import { connect } from 'node:net';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { inbound, iso, outbound } from './fixtures/conversations';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const MIN = 60_000;
const HOUR = 60 * MIN;

async function setup(t: { teardown(fn: () => unknown): void }, timezone = 'UTC', now = NOW) {
  const { app } = await buildTestApp(t, { timezone }, { now: () => new Date(now) });
  const admin = await createAdmin(app);
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '1001', messagingToken: 'tok' });
  const ben = await createUser(app, { email: 'ben@example.com' });
  return { app, admin, ana, ben };
}

async function get(app: App, userId: number, query: string, headers: Record<string, string>) {
  return app.inject({ method: 'GET', url: `/api/user/${userId}/conversations${query}`, headers });
}

const validate = addFormats(new Ajv({ strict: false })).compile(ConversationList);

t.test('authorization: the user itself and an ADMIN may read; another CLIENT, nobody else', async (t) => {
  const { app, admin, ana, ben } = await setup(t);
  inbound(app, ana.id, { from: '15551230001', at: NOW - HOUR });
  const own = await get(app, ana.id, '', bearer(app, ana));
  t.equal(own.statusCode, 200);
  t.equal(own.json().length, 1);
  t.same((await get(app, ana.id, '', bearer(app, admin))).json(), own.json());

  const other = await get(app, ana.id, '', bearer(app, ben));
  t.equal(other.statusCode, 403);
  t.same(other.json(), { statusCode: 403, code: 'FORBIDDEN', error: 'Forbidden', message: 'You may only read your own conversations' });
  // A CLIENT cannot probe which ids exist.
  t.equal((await get(app, 999, '', bearer(app, ben))).statusCode, 403);

  const unknown = await get(app, 999, '', bearer(app, admin));
  t.same(unknown.json(), { statusCode: 404, code: 'USER_NOT_FOUND', error: 'Not Found', message: 'User not found' });
  const anonymous = await get(app, ana.id, '', {});
  t.same(anonymous.json(), { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'Authentication required' });
  t.equal((await get(app, ana.id, '', { authorization: 'Bearer nope' })).statusCode, 401);
  const cookie = await get(app, ana.id, '', { cookie: `token=${app.issueToken(ana)}` });
  t.equal(cookie.statusCode, 200);
  for (const id of ['abc', '0', '-1', '1.5']) {
    const res = await app.inject({ method: 'GET', url: `/api/user/${id}/conversations`, headers: bearer(app, admin) });
    t.equal(res.statusCode, 400, `id ${id}`);
    t.equal(res.json().code, 'VALIDATION_ERROR');
  }
});

t.test('every query value outside the contract is a 400 naming the parameter', async (t) => {
  const { app, ana } = await setup(t);
  const cases: [string, RegExp][] = [
    ['?type=video2', /^querystring\/type must be equal to one of the allowed values/],
    ['?type=TEXT', /^querystring\/type/],
    ['?type=text&type=image', /^querystring\/type/],
    ['?filter=tomorrow', /^querystring\/filter must be equal to one of the allowed values/],
    ['?filter=', /^querystring\/filter/],
    ['?contact=%2B15551230001', /^querystring\/contact must match pattern/],
    ['?contact=ana', /^querystring\/contact/],
    ['?contact=', /^querystring\/contact/],
    ['?limit=0', /^querystring\/limit must be >= 1/],
    ['?limit=201', /^querystring\/limit must be <= 200/],
    ['?limit=1.5', /^querystring\/limit must be integer/],
    ['?limit=ten', /^querystring\/limit must be integer/],
    ['?before=yesterday', /^querystring\/before must match format "date-time"/],
    ['?before=2026-11-21T10:00:00', /^querystring\/before must match format "date-time"/],
    ['?before=2026-02-30T10:00:00Z', /^querystring\/before must match format "date-time"/],
    ['?before=2026-06-30T23:59:60Z', /^querystring\/before must be a representable date-time/],
    ['?page=2', /^querystring\/page is not an allowed property/],
  ];
  for (const [query, message] of cases) {
    const res = await get(app, ana.id, query, bearer(app, ana));
    t.equal(res.statusCode, 400, query);
    t.match(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message }, query);
  }
});

t.test('the exact answer: contact, counts, service window, every message field and the status history', async (t) => {
  const { app, ana } = await setup(t);
  const at = NOW - 5 * HOUR;
  const photo = inbound(app, ana.id, {
    from: '15551230001', name: 'Ana Lima', at, type: 'image', text: 'a caption',
    media: { id: 'm1', mime_type: 'image/jpeg', sha256: 'abc=', filename: null },
  });
  const sent = outbound(app, ana.id, {
    to: '15551230001', at: at + MIN, text: 'Nice!',
    // Delivered before sent arrives (callbacks race): the history is ordered by the network's time.
    statuses: [['delivered', at + 3 * MIN], ['sent', at + 2 * MIN], ['read', at + 4 * MIN]],
  });
  const templ = outbound(app, ana.id, {
    to: '15551230001', at: at + 5 * MIN, template: { name: 'order_update', language: 'en_US', params: ['Ana', '#42'] },
    statuses: [['failed', at + 6 * MIN, { code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: 'More than 24 hours' } }]],
  });
  const place = inbound(app, ana.id, {
    from: '15551230001', at: at + 7 * MIN, type: 'location', text: 'Cafe', replyTo: photo,
    location: { latitude: 38.7, longitude: -9.1, name: 'Cafe', address: 'Rua 1' },
  });
  const res = await get(app, ana.id, '', bearer(app, ana));
  t.equal(res.statusCode, 200);
  t.ok(validate(res.json()), JSON.stringify(validate.errors));
  t.strictSame(res.json(), [{
    contact: { id: 1, wa_id: '15551230001', user_id: null, username: null, name: 'Ana Lima' },
    last_message_at: iso(at + 7 * MIN),
    message_count: 4,
    service_window_expires_at: iso(at + 7 * MIN + 24 * HOUR),
    messages: [
      { id: 1, wamid: photo, direction: 'inbound', type: 'image', text: 'a caption', status: 'received', created_at: iso(at),
        media: { id: 'm1', mime_type: 'image/jpeg', sha256: 'abc=', filename: null, stored: false, url: null, error: null } },
      { id: sent.id, wamid: sent.wamid, direction: 'outbound', type: 'text', text: 'Nice!', status: 'read', created_at: iso(at + MIN),
        to: '15551230001', error: null, status_updated_at: iso(at + 4 * MIN), statuses: [
          { status: 'sent', at: iso(at + 2 * MIN), error: null },
          { status: 'delivered', at: iso(at + 3 * MIN), error: null },
          { status: 'read', at: iso(at + 4 * MIN), error: null }], origin: 'api' },
      { id: templ.id, wamid: templ.wamid, direction: 'outbound', type: 'template', text: null, status: 'failed', created_at: iso(at + 5 * MIN),
        to: '15551230001', error: { code: 131047, title: 'Re-engagement message', details: 'More than 24 hours' },
        status_updated_at: iso(at + 6 * MIN), statuses: [
          { status: 'failed', at: iso(at + 6 * MIN), error: { code: 131047, title: 'Re-engagement message', details: 'More than 24 hours' } }],
        origin: 'api', template: { name: 'order_update', language: 'en_US', params: ['Ana', '#42'] } },
      { id: 4, wamid: place, direction: 'inbound', type: 'location', text: 'Cafe', status: 'received', created_at: iso(at + 7 * MIN),
        location: { latitude: 38.7, longitude: -9.1, name: 'Cafe', address: 'Rua 1' }, reply_to: photo },
    ],
  }]);
});

t.test('pending, failed-before-sending, failed-then-delivered and flagged inbound messages', async (t) => {
  const { app, ana } = await setup(t);
  // Seeded after the start-up pass: a pending send this old would otherwise be settled as interrupted.
  await app.ready();
  await app.settleInterrupted.run();
  const pending = outbound(app, ana.id, { to: '15551230002', at: NOW - 4 * HOUR, accepted: false });
  const unreachable = outbound(app, ana.id, { to: '15551230002', at: NOW - 3 * HOUR,
    failed: { code: 'MESSAGING_UNAVAILABLE', title: 'No answer from the messaging network in time', details: null } });
  const recovered = outbound(app, ana.id, { to: '15551230002', at: NOW - 2 * HOUR, statuses: [
    ['failed', NOW - 2 * HOUR + MIN, [{ code: 131049, title: 'Not delivered', error_data: { details: 'ecosystem' } }]],
    ['delivered', NOW - 2 * HOUR + 2 * MIN]] });
  inbound(app, ana.id, { from: '15551230002', at: NOW - HOUR, type: 'unsupported', text: null, error: { code: 131051, title: 'Message type unknown', details: null } });
  const [conversation] = (await get(app, ana.id, '', bearer(app, ana))).json();
  t.equal(conversation.service_window_expires_at, iso(NOW - HOUR + 24 * HOUR));
  t.match(conversation.messages, [
    { id: pending.id, wamid: null, status: 'pending', error: null, status_updated_at: null, statuses: [] },
    { id: unreachable.id, wamid: null, status: 'failed', statuses: [],
      error: { code: 'MESSAGING_UNAVAILABLE', title: 'No answer from the messaging network in time', details: null } },
    { id: recovered.id, status: 'delivered', error: null, statuses: [
      { status: 'failed', error: { code: 131049, title: 'Not delivered', details: 'ecosystem' } }, { status: 'delivered', error: null }] },
    { type: 'unsupported', text: null, error: { code: 131051, title: 'Message type unknown', details: null } },
  ]);
});

t.test('newest conversation first, messages oldest first; empty conversations left out', async (t) => {
  const { app, ana } = await setup(t);
  inbound(app, ana.id, { from: '111111111', at: NOW - 3 * HOUR, text: 'a1' });
  inbound(app, ana.id, { from: '222222222', at: NOW - 2 * HOUR, text: 'b1' });
  outbound(app, ana.id, { to: '111111111', at: NOW - HOUR, text: 'a2' });
  // Typed with a prefix the network rewrites: its message moves to 333333333, the typed number's conversation stays empty.
  outbound(app, ana.id, { to: '0333333333', waId: '333333333', at: NOW - 90 * MIN, text: 'c1' });
  const body = (await get(app, ana.id, '', bearer(app, ana))).json() as
    { contact: { wa_id: string }; service_window_expires_at: string | null; messages: { text: string }[] }[];
  t.same(body.map((c) => c.contact.wa_id), ['111111111', '333333333', '222222222']);
  t.same(body[0]!.messages.map((m) => m.text), ['a1', 'a2']);
  t.equal(body[0]!.contact.wa_id, '111111111');
  t.same(body[1]!.messages.map((m) => m.text), ['c1']);
  t.equal(body[1]!.service_window_expires_at, null);
});

t.test('type and contact filters; message_count counts the matching messages only', async (t) => {
  const { app, ana } = await setup(t);
  inbound(app, ana.id, { from: '111111111', at: NOW - 5 * HOUR, type: 'image', text: null, media: { id: 'x' } });
  inbound(app, ana.id, { from: '111111111', at: NOW - 4 * HOUR, text: 'hello' });
  outbound(app, ana.id, { to: '111111111', at: NOW - 3 * HOUR, template: { name: 'welcome', language: 'en', params: ['A', 'B'] } });
  inbound(app, ana.id, { from: '222222222', at: NOW - 2 * HOUR, text: 'other' });
  const read = async (query: string) => (await get(app, ana.id, query, bearer(app, ana))).json() as
    { contact: { wa_id: string }; message_count: number; last_message_at: string; messages: { type: string }[] }[];

  const images = await read('?type=image');
  t.same(images.map((c) => [c.contact.wa_id, c.message_count, c.last_message_at]), [['111111111', 1, iso(NOW - 5 * HOUR)]]);
  t.same(images[0]!.messages.map((m) => m.type), ['image']);
  t.same((await read('?type=text')).map((c) => [c.contact.wa_id, c.message_count]), [['222222222', 1], ['111111111', 1]]);
  t.same((await read('?type=template')).map((c) => c.messages[0]!.type), ['template']);
  t.same(await read('?type=sticker'), []);
  t.same((await read('?contact=111111111')).map((c) => [c.contact.wa_id, c.message_count]), [['111111111', 3]]);
  t.same((await read('?contact=111111111&type=text')).map((c) => c.message_count), [1]);
  t.same(await read('?contact=999999999'), []);
  // 111111111 has the newer message overall, 333333333 the newer text: the page follows the text.
  inbound(app, ana.id, { from: '333333333', at: NOW - 210 * MIN, text: 'third' });
  t.same((await read('?type=text&limit=2')).map((c) => c.contact.wa_id), ['222222222', '333333333']);
  t.same((await read(`?type=text&limit=2&before=${iso(NOW - 210 * MIN)}`)).map((c) => c.contact.wa_id), ['111111111']);
});

t.test('at most the latest 200 messages per conversation; message_count counts them all', async (t) => {
  const { app, ana } = await setup(t);
  for (let i = 0; i < 205; i++) inbound(app, ana.id, { from: '111111111', at: NOW - 1000 * MIN + i * MIN, text: `m${i}` });
  inbound(app, ana.id, { from: '111111111', at: NOW - 2000 * MIN, type: 'image', text: null });
  const [all] = (await get(app, ana.id, '', bearer(app, ana))).json();
  t.equal(all.message_count, 206);
  t.equal(all.messages.length, 200);
  t.equal(all.messages[0].text, 'm5');
  t.equal(all.messages[199].text, 'm204');
  const [texts] = (await get(app, ana.id, '?type=text', bearer(app, ana))).json();
  t.equal(texts.message_count, 205);
  t.equal(texts.messages.length, 200);
  t.same([texts.messages[0].text, texts.messages[199].text], ['m5', 'm204']);
  t.same(texts.messages.map((m: { text: string }) => m.text), all.messages.map((m: { text: string }) => m.text), 'oldest first, in order');
  const [images] = (await get(app, ana.id, '?type=image', bearer(app, ana))).json();
  t.equal(images.message_count, 1);
});

t.test('one answer holds at most 5,000 messages: the page ends after the last conversation that fits', async (t) => {
  const { app, ana } = await setup(t);
  // 26 conversations of 200 messages: 25 of them are 5,000 messages; the 26th (the oldest) comes with `before`.
  app.db.$client.transaction(() => {
    for (let c = 0; c < 26; c++) {
      for (let i = 0; i < 200; i++) inbound(app, ana.id, { from: `${100000 + c}`, at: NOW - (c + 1) * 1000 * MIN + i * MIN, text: `c${c}m${i}` });
    }
  })();
  const read = async (query: string) => (await get(app, ana.id, query, bearer(app, ana))).json() as
    { contact: { wa_id: string }; last_message_at: string; messages: { text: string }[] }[];
  const first = await read('?limit=50');
  t.equal(first.length, 25);
  t.equal(first.reduce((n, c) => n + c.messages.length, 0), 5000);
  t.same([first[0]!.messages[0]!.text, first[24]!.messages[199]!.text], ['c0m0', 'c24m199']);
  const next = await read(`?limit=50&before=${first[24]!.last_message_at}`);
  t.same(next.map((c) => c.contact.wa_id), ['100025']);
  // Under the cap the limit decides.
  t.equal((await read('?limit=3')).length, 3);
  // A page of smaller conversations fills up to the cap: 25 × 200 + 1 × 10 would be 5,010.
  inbound(app, ana.id, { from: '100099', at: NOW, text: 'newest' });
  const capped = await read('?limit=200');
  t.same([capped.length, capped[0]!.contact.wa_id, capped.at(-1)!.contact.wa_id], [25, '100099', '100023']);
  t.equal(capped.reduce((n, c) => n + c.messages.length, 0), 1 + 24 * 200);
});

t.test('limit and before page through conversations by their last matching message', async (t) => {
  const { app, ana } = await setup(t);
  for (let c = 1; c <= 5; c++) inbound(app, ana.id, { from: `10000000${c}`, at: NOW - c * HOUR, text: `c${c}` });
  // Same last time as 100000002: the higher conversation id goes first.
  inbound(app, ana.id, { from: '100000009', at: NOW - 2 * HOUR, text: 'c9' });
  const page = async (query: string) => ((await get(app, ana.id, query, bearer(app, ana))).json() as
    { contact: { wa_id: string }; last_message_at: string }[]).map((c) => c.contact.wa_id);
  t.same(await page(''), ['100000001', '100000009', '100000002', '100000003', '100000004', '100000005']);
  t.same(await page('?limit=2'), ['100000001', '100000009']);
  t.same(await page(`?limit=2&before=${iso(NOW - 2 * HOUR)}`), ['100000003', '100000004']);
  t.same(await page(`?limit=2&before=${iso(NOW - 4 * HOUR)}`), ['100000005']);
  t.same(await page(`?before=${iso(NOW - 5 * HOUR)}`), []);
  // An offset is honoured: one millisecond after a conversation's last message includes it.
  t.same(await page(`?limit=1&before=2026-11-21T10:00:00.001%2B00:00`), ['100000009']);
});

t.test('periods are calendar days in TIMEZONE, at the injected time, with their exact midnights', async (t) => {
  // 00:30 on Monday 9 March 2026 in New York, the day after the clocks moved forward (a 23-hour Sunday).
  const { app, ana } = await setup(t, 'America/New_York', Date.parse('2026-03-09T04:30:00.000Z'));
  const probes: Record<string, string> = {
    a: '2026-03-09T03:59:59.999Z', // Sunday 23:59:59.999 EDT
    b: '2026-03-09T04:00:00.000Z', // Monday 00:00 EDT
    c: '2026-03-10T03:59:59.999Z', // Monday 23:59:59.999 EDT
    d: '2026-03-10T04:00:00.000Z', // Tuesday
    e: '2026-03-08T05:00:00.000Z', // Sunday 00:00 EST
    f: '2026-03-08T04:59:59.999Z', // Saturday 23:59:59.999 EST
    g: '2026-03-03T05:00:00.000Z', // Tuesday 3 March 00:00: the first of the last 7 days
    h: '2026-03-03T04:59:59.999Z',
    i: '2026-03-01T05:00:00.000Z', // 1 March 00:00 EST
    j: '2026-03-01T04:59:59.999Z',
    k: '2026-02-08T05:00:00.000Z', // 8 February 00:00: the first of the last 30 days
    l: '2026-02-08T04:59:59.999Z',
  };
  for (const [text, at] of Object.entries(probes)) inbound(app, ana.id, { from: '111111111', at: Date.parse(at), text });
  const texts = async (filter: string) => {
    const body = (await get(app, ana.id, `?filter=${filter}`, bearer(app, ana))).json() as { messages: { text: string }[] }[];
    return body.flatMap((c) => c.messages.map((m) => m.text)).join('');
  };
  t.equal(await texts('today'), 'bc');
  t.equal(await texts('yesterday'), 'ea');
  t.equal(await texts('last_7_days'), 'gfeabc');
  t.equal(await texts('this_month'), 'ihgfeabcd'); // the whole month, tomorrow included
  t.equal(await texts('last_30_days'), 'kjihgfeabc');
  t.equal(await texts('all'), 'lkjihgfeabcd');
  t.same((await get(app, ana.id, '?filter=yesterday', bearer(app, ana))).json()[0].last_message_at, probes.a);
});

t.test('the same instants fall on other days in UTC', async (t) => {
  const { app, ana } = await setup(t, 'UTC', Date.parse('2026-03-09T04:30:00.000Z'));
  inbound(app, ana.id, { from: '111111111', at: Date.parse('2026-03-09T03:59:59.999Z'), text: 'a' });
  inbound(app, ana.id, { from: '111111111', at: Date.parse('2026-03-08T23:59:59.999Z'), text: 'z' });
  const [today] = (await get(app, ana.id, '?filter=today', bearer(app, ana))).json();
  t.same(today.messages.map((m: { text: string }) => m.text), ['a']);
});

t.test('the fast ISO formatter writes what Date does', async (t) => {
  const samples = [0, 1, 999, 86_399_999, 86_400_000, NOW, NOW + 123, 951_782_400_000 /* 2000-02-29 */, 253_402_300_799_999, 253_402_300_800_000, -1, -86_400_001];
  for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.random() * 4_102_444_800_000));
  const wrong = samples.filter((ms) => isoUtc(ms) !== new Date(ms).toISOString());
  t.same(wrong, []);
});

t.test('listings at once beyond the answer slots, and answers bigger than a slot, each come back whole and right', async (t) => {
  const { app, ana, ben } = await setup(t);
  const long = 'x'.repeat(1200);
  app.db.$client.transaction(() => {
    // About 2.9 MB of answer: more than one slot holds, so it crosses the thread as bytes of its own.
    for (let c = 0; c < 11; c++) {
      for (let i = 0; i < 200; i++) inbound(app, ana.id, { from: `${200000 + c}`, at: NOW - (c + 1) * 1000 * MIN + i * MIN, text: `${long}${c}.${i}` });
    }
    for (let c = 0; c < 3; c++) inbound(app, ben.id, { from: `${300000 + c}`, at: NOW - c * MIN, text: `ben ${c}` });
  })();
  const one = async (user: typeof ana) => (await get(app, user.id, '?limit=50', bearer(app, user))).body;
  const [bigAlone, smallAlone] = [await one(ana), await one(ben)];
  t.ok(Buffer.byteLength(bigAlone) > SLOT_BYTES, 'bigger than a slot');
  t.equal(JSON.parse(bigAlone).length, 11);
  t.equal(JSON.parse(smallAlone).length, 3);
  // Twice as many at once as there are slots, big and small mixed: none sees another's bytes.
  const users = Array.from({ length: 2 * SLOTS + 2 }, (_, i) => (i % 3 === 0 ? ana : ben));
  const bodies = await Promise.all(users.map(one));
  bodies.forEach((body, i) => t.equal(body, users[i] === ana ? bigAlone : smallAlone, `listing ${i}`));
  // And the slots are free again: the same once more.
  t.same(await Promise.all(users.map(one)), bodies);
});

/** Ana with about 1.3 MB of answer at limit=50 (fits a slot, and takes the thread a moment), Ben with three messages. */
function seedFairness(app: App, ana: { id: number }, ben: { id: number }) {
  const long = 'y'.repeat(1200);
  app.db.$client.transaction(() => {
    for (let c = 0; c < 5; c++) {
      for (let i = 0; i < 200; i++) inbound(app, ana.id, { from: `${400000 + c}`, at: NOW - (c + 1) * 1000 * MIN + i * MIN, text: `${long}${c}.${i}` });
    }
    for (let c = 0; c < 3; c++) inbound(app, ben.id, { from: `${500000 + c}`, at: NOW - c * MIN, text: `ben ${c}` });
  })();
}

t.test("10 parallel listings of one user run at most 4 at once; another user's listing does not wait behind them", async (t) => {
  const { app, ana, ben } = await setup(t);
  seedFairness(app, ana, ben);
  const alone = (await get(app, ana.id, '?limit=50', bearer(app, ana))).body;
  t.ok(Buffer.byteLength(alone) < SLOT_BYTES && Buffer.byteLength(alone) > 1_000_000, 'a big answer that fits a slot');
  // Ben asks once all of Ana's are queued and none has finished: he waits behind at most her 4 under way, not behind the
  // 6 waiting. On a busy machine her first ones may finish before the last is queued: that try tests nothing (Ben may
  // rightly come after a listing that started before him), so it is run again, up to 5 times.
  let finished: string[] = [];
  let anas: Promise<Awaited<ReturnType<typeof get>>>[] = [];
  let waitingWhenBenAsked = 0;
  for (let attempt = 0; attempt < 5 && waitingWhenBenAsked < 10 - USER_TURNS; attempt++) {
    await Promise.all(anas);
    const order: string[] = finished = [];
    anas = Array.from({ length: 10 }, (_, i) => get(app, ana.id, '?limit=50', bearer(app, ana)).then((res) => {
      order.push(`ana${i}`);
      return res;
    }));
    const asked = () => app.conversationsReader.stats().waiting + app.conversationsReader.stats().underWay + order.length;
    for (let i = 0; i < 2000 && asked() < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    t.equal(asked(), 10, 'all of Ana\'s listings reached the reader');
    t.ok(app.conversationsReader.stats().underWay <= USER_TURNS, 'at most 4 under way, the others waiting their turn (or done)');
    waitingWhenBenAsked = app.conversationsReader.stats().waiting;
  }
  t.equal(waitingWhenBenAsked, 10 - USER_TURNS, 'Ben asked while 6 of Ana\'s listings waited their turn');
  const bens = get(app, ben.id, '', bearer(app, ben)).then((res) => {
    finished.push('ben');
    return res;
  });
  const answers = await Promise.all(anas);
  t.equal((await bens).statusCode, 200);
  answers.forEach((res, i) => {
    t.equal(res.statusCode, 200, `listing ${i}`);
    t.equal(res.body, alone, `listing ${i} whole and right`);
  });
  t.equal(app.conversationsReader.stats().peakPerUser, USER_TURNS, 'never more than 4 of one user at once');
  t.ok(finished.indexOf('ben') < finished.indexOf('ana9'), `Ben answered before Ana's last (${finished.join(' ')})`);
  t.match(app.conversationsReader.stats(), { underWay: 0, waiting: 0, freeSlots: SLOTS });
});

t.test('listings whose client closes the socket free their answer slots and turns at once', async (t) => {
  const { app, ana, ben } = await setup(t);
  seedFairness(app, ana, ben);
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = new URL(address);
  const token = bearer(app, ana).authorization;
  // Each client asks and goes away at once: its listing is still waiting its turn or being computed.
  for (let i = 0; i < 12; i++) {
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.end(`GET /api/user/${ana.id}/conversations?limit=50 HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n`, () => socket.destroy());
  }
  // Counted, not timed: until all 12 were run or abandoned and none is under way (a deadline only to fail instead of hanging).
  const settled = () => {
    const stats = app.conversationsReader.stats();
    return stats.run + stats.abandoned === 12 && stats.underWay === 0;
  };
  for (let i = 0; i < 2000 && !settled(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  t.match(app.conversationsReader.stats(), { underWay: 0, waiting: 0, freeSlots: SLOTS }, 'every slot and turn free again');
  t.equal(app.conversationsReader.stats().run + app.conversationsReader.stats().abandoned, 12, 'all 12 reached the reader');
  const again = await get(app, ana.id, '?limit=50', bearer(app, ana));
  t.equal(again.statusCode, 200);
  t.equal(JSON.parse(again.body).length, 5);
});
