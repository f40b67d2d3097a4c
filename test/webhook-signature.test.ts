import t from 'tap';
import { escapedFormHmac, isValidSignature, sameSecret, signBody as sign } from '../src/webhooks/signature';
import { buildTestApp, createUser } from './helper';
import { deliver, fixtureText, inboxRows, messageCount } from './fixtures/webhooks';

const SECRET = 'app-secret-123';
const raw = fixtureText('inbound_reaction'); // literal UTF-8 emoji: the HMAC must be over the bytes
const INVALID = { statusCode: 401, code: 'INVALID_SIGNATURE', error: 'Unauthorized', message: 'X-Hub-Signature-256 is missing or does not match the body' };

async function appWithUser(t: Parameters<typeof buildTestApp>[0], secret: string | undefined) {
  const { app } = await buildTestApp(t, { messagingAppSecret: secret });
  await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '409552778964973' });
  return app;
}

t.test('signBody is the HMAC-SHA256 header value (RFC 4231 test case 2)', async (t) => {
  t.equal(sign('what do ya want for nothing?', 'Jefe'), 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  t.equal(sign(Buffer.from(raw), SECRET), sign(raw, SECRET), 'a string is signed as its UTF-8 bytes');
});

t.test('isValidSignature checks the exact bytes, in any hex case, and nothing else', async (t) => {
  const body = Buffer.from(raw);
  const good = sign(body, SECRET);
  t.ok(isValidSignature(body, good, SECRET));
  t.ok(isValidSignature(body, 'sha256=' + good.slice(7).toUpperCase(), SECRET));
  t.notOk(isValidSignature(Buffer.from(raw.replace('👍', '👎')), good, SECRET), 'tampered body');
  t.notOk(isValidSignature(body, sign(body, 'other'), SECRET), 'wrong secret');
  t.notOk(isValidSignature(body, undefined, SECRET), 'missing');
  t.notOk(isValidSignature(body, good.slice(7), SECRET), 'no sha256= prefix');
  t.notOk(isValidSignature(body, good.slice(0, -2), SECRET), 'truncated');
  t.notOk(isValidSignature(body, good + '00', SECRET), 'too long');
  t.notOk(isValidSignature(body, 'sha1=' + good.slice(7), SECRET), 'other algorithm');
  t.notOk(isValidSignature(body, good.slice(0, -1) + 'g', SECRET), 'not hex');
});

// The network signs "an escaped unicode version of the payload": é -> \u00e9, 😀 -> \ud83d\ude00 (lowercase hex).
const accented = '{"text":{"body":"Olá, café ñandú 😀👍🏽"},"id":"wamid.é"}';
const escapedByHand = '{"text":{"body":"Ol\\u00e1, caf\\u00e9 \\u00f1and\\u00fa \\ud83d\\ude00\\ud83d\\udc4d\\ud83c\\udffd"},"id":"wamid.\\u00e9"}';

t.test('a signature over the raw bytes with non-ASCII escaped (lowercase \\uXXXX, surrogate pairs) is valid too', async (t) => {
  t.equal(JSON.parse(escapedByHand).text.body, JSON.parse(accented).text.body, 'the hand-escaped text is the same JSON');
  const body = Buffer.from(accented);
  t.ok(isValidSignature(body, sign(accented, SECRET), SECRET), 'over the raw UTF-8 bytes');
  t.ok(isValidSignature(body, sign(escapedByHand, SECRET), SECRET), 'over the escaped form');
  t.ok(isValidSignature(Buffer.from(escapedByHand), sign(escapedByHand, SECRET), SECRET), 'an escaped body, signed as is');
  t.notOk(isValidSignature(body, sign(escapedByHand.toUpperCase(), SECRET), SECRET), 'uppercase hex is another text');
  t.notOk(isValidSignature(body, sign(escapedByHand.replace('\\ud83d\\ude00', '\\u1f600'), SECRET), SECRET), 'code points instead of UTF-16 units');
  t.notOk(isValidSignature(body, sign(escapedByHand, 'other'), SECRET), 'escaped form, wrong secret');
  t.notOk(isValidSignature(Buffer.from(accented.replace('😀', '😁')), sign(escapedByHand, SECRET), SECRET), 'escaped form of another body');
  t.notOk(isValidSignature(Buffer.from(escapedByHand), sign(accented, SECRET), SECRET), 'an escaped body is not unescaped to match');
});

// The escaped form of the text JSON.parse sees: the bytes decoded as the webhook decodes them, one string per character.
const escapeText = (text: string) => text.replace(/[^\x00-\x7f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const bySlowPath = (body: Buffer) => sign(escapeText(body.toString('utf8')), SECRET);

t.test('the one-pass escaped form matches the per-character one for 2-, 3- and 4-byte UTF-8', async (t) => {
  const cases = ['é ñ ß ©', '€ 中文 ✓ \uffff \ufeff', '😀 👍🏽 𝄞 \u{10ffff} \u{10000}', 'mix: a€b😀cé' + 'x'.repeat(70_000) + '中😀'];
  for (const text of cases) {
    const body = Buffer.from(text);
    const expected = bySlowPath(body);
    t.equal('sha256=' + escapedFormHmac(body, SECRET).toString('hex'), expected, JSON.stringify(text.slice(0, 20)));
    t.ok(isValidSignature(body, expected, SECRET), 'accepted: ' + JSON.stringify(text.slice(0, 20)));
  }
  t.equal('sha256=' + escapedFormHmac(Buffer.from('😀'), SECRET).toString('hex'), sign('\\ud83d\\ude00', SECRET), 'an emoji is a surrogate pair');
});

t.test('random text of every UTF-8 length, across the chunk boundaries, escapes as the per-character way does', async (t) => {
  let seed = 11;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
  // ASCII, 2-byte, 3-byte (surrogates skipped: not text) and 4-byte code points, the last up to U+10FFFF.
  const ranges: [number, number][] = [[0x20, 0x7f], [0x80, 0x800], [0x800, 0xd800], [0xe000, 0x10000], [0x10000, 0x110000]];
  for (let round = 0; round < 20; round++) {
    const points = Array.from({ length: 5_000 + next(30_000) }, () => {
      const [from, to] = ranges[next(ranges.length)]!;
      return from + next(to - from);
    });
    const body = Buffer.from(String.fromCodePoint(...points));
    if ('sha256=' + escapedFormHmac(body, SECRET).toString('hex') !== bySlowPath(body)) t.fail(`differs in round ${round}`);
  }
  t.pass('20 random texts of 5,000 to 35,000 characters');
});

t.test('invalid UTF-8 is escaped as the U+FFFD that the webhook\'s decoding (and so JSON.parse) sees', async (t) => {
  const invalid = [
    [0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xc2], [0xc2, 0x41], [0xe0, 0x80, 0x80], [0xe0, 0xa0], [0xed, 0xa0, 0x80],
    [0xef, 0xbf], [0xf0, 0x80, 0x80, 0x80], [0xf0, 0x9f, 0x98], [0xf0, 0x9f, 0x41, 0x98], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80],
    [0xff, 0xfe], [0xe2, 0x82], [0xe2, 0x82, 0xc3, 0xa9], [0xf0, 0x9f, 0x98, 0x80, 0x80],
  ];
  for (const bytes of invalid) {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bytes), Buffer.from('"}')]);
    t.equal('sha256=' + escapedFormHmac(body, SECRET).toString('hex'), bySlowPath(body), Buffer.from(bytes).toString('hex'));
    t.ok(isValidSignature(body, bySlowPath(body), SECRET), 'accepted: ' + Buffer.from(bytes).toString('hex'));
  }
  t.equal('sha256=' + escapedFormHmac(Buffer.from([0xf0, 0x9f, 0x41]), SECRET).toString('hex'), sign('\\ufffdA', SECRET), 'a truncated sequence is one U+FFFD');
  // Random bytes, many of them invalid: same answer as decoding then escaping per character.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
  for (let round = 0; round < 200; round++) {
    const body = Buffer.from(Array.from({ length: 1 + (round % 40) }, () => (next() % 3 === 0 ? 0x41 : next() | 0x80)));
    if ('sha256=' + escapedFormHmac(body, SECRET).toString('hex') !== bySlowPath(body)) t.fail('differs for ' + body.toString('hex'));
  }
});

t.test('a 3 MB non-ASCII body with a wrong signature is refused 401 and stores nothing', async (t) => {
  const app = await appWithUser(t, SECRET);
  const junk = '{"x":"' + 'é中😀'.repeat(3 * 1024 * 1024 / 9 - 2) + '"}';
  t.ok(Buffer.byteLength(junk) > 2.9 * 1024 * 1024 && Buffer.byteLength(junk) <= 3 * 1024 * 1024, 'about 3 MB');
  const res = await deliver(app, junk, 'not-the-secret');
  t.equal(res.statusCode, 401);
  t.same(res.json(), INVALID);
  t.same(inboxRows(app), []);
});

t.test('the webhook takes a real callback with emoji and accents signed in either form', async (t) => {
  const app = await appWithUser(t, SECRET);
  const text = fixtureText('inbound_text').replace(/"body": ?"[^"]*"/, '"body": "Olá 😀 ñ"');
  t.not(text, fixtureText('inbound_text'), 'the fixture carries the accented text');
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  t.equal((await deliver(app, text, undefined, { 'x-hub-signature-256': sign(escaped, SECRET) })).statusCode, 200, 'escaped-form signature');
  t.equal((await deliver(app, text.replace('wamid.', 'wamid.X'), SECRET)).statusCode, 200, 'raw-bytes signature');
  const tampered = await deliver(app, text.replace('ñ', 'n'), undefined, { 'x-hub-signature-256': sign(escaped, SECRET) });
  t.equal(tampered.statusCode, 401);
  t.same(inboxRows(app).map((e) => e.rawBody), [text, text.replace('wamid.', 'wamid.X')], 'stored byte for byte');
});

t.test('sameSecret compares whole values', async (t) => {
  t.ok(sameSecret('token', 'token'));
  t.notOk(sameSecret('toke', 'token'));
  t.notOk(sameSecret('token ', 'token'));
  t.notOk(sameSecret('', 'token'));
});

t.test('a correctly signed raw body is stored byte for byte and applied', async (t) => {
  const app = await appWithUser(t, SECRET);
  const res = await deliver(app, raw, SECRET);
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'received' });
  const [event] = inboxRows(app);
  t.equal(event?.rawBody, raw);
  t.equal(event?.state, 'processed');
  t.equal(messageCount(app), 1);
});

t.test('bad signatures are 401 and store nothing', async (t) => {
  const app = await appWithUser(t, SECRET);
  const reserialised = JSON.stringify(JSON.parse(raw));
  const cases: [string, Promise<{ statusCode: number; json(): unknown }>][] = [
    ['missing header', deliver(app, raw)],
    ['wrong secret', deliver(app, raw, 'not-the-secret')],
    ['tampered body', deliver(app, raw.replace('👍', '👎'), undefined, { 'x-hub-signature-256': sign(raw, SECRET) })],
    ['signature of the re-serialised JSON', deliver(app, raw, undefined, { 'x-hub-signature-256': sign(reserialised, SECRET) })],
    ['garbage header', deliver(app, raw, undefined, { 'x-hub-signature-256': 'sha256=xyz' })],
    ['non-JSON body without signature', deliver(app, 'not json')],
  ];
  for (const [name, response] of cases) {
    const res = await response;
    t.equal(res.statusCode, 401, name);
    t.same(res.json(), INVALID, name);
  }
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), 0);
});

const NOT_CONFIGURED = {
  statusCode: 503, code: 'WEBHOOK_NOT_CONFIGURED', error: 'Service Unavailable', message: 'Callbacks are refused until MESSAGING_APP_SECRET is set',
};
const unsignedWarnings = (logs: string) => logs.split('\n').filter((line) => line.includes('unsigned webhook callback accepted'));

t.test('with no app secret configured, every callback is refused with 503 and nothing is stored', async (t) => {
  const { app, logs } = await buildTestApp(t, { messagingAppSecret: undefined });
  await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '409552778964973' });
  const cases: [string, Promise<{ statusCode: number; json(): unknown }>][] = [
    ['unsigned', deliver(app, raw)],
    ['signed with some secret', deliver(app, raw, 'whatever')],
    ['not JSON', deliver(app, 'not json')],
  ];
  for (const [name, response] of cases) {
    const res = await response;
    t.equal(res.statusCode, 503, name);
    t.same(res.json(), NOT_CONFIGURED, name);
  }
  t.same(inboxRows(app), []);
  t.equal(messageCount(app), 0);
  t.same(unsignedWarnings(logs()), []);
});

t.test('MESSAGING_ALLOW_UNSIGNED: accepted without a signature, with a warning at most once a minute', async (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const { app, logs } = await buildTestApp(t, { messagingAppSecret: undefined, messagingAllowUnsigned: true }, { now: () => new Date(now) });
  await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '409552778964973' });
  t.equal((await deliver(app, raw)).statusCode, 200);
  t.equal((await deliver(app, fixtureText('inbound_image'), 'whatever')).statusCode, 200);
  t.same(inboxRows(app).map((e) => e.state), ['processed', 'processed']);
  t.equal(messageCount(app), 2);
  t.equal(unsignedWarnings(logs()).length, 1, 'one warning for two callbacks within a minute');
  t.match(JSON.parse(unsignedWarnings(logs())[0]!), { level: 40, reqId: String });

  now += 60_000;
  t.equal((await deliver(app, raw)).statusCode, 200);
  t.equal(unsignedWarnings(logs()).length, 2, 'another one a minute later');
});

t.test('MESSAGING_ALLOW_UNSIGNED changes nothing while a secret is set', async (t) => {
  const { app } = await buildTestApp(t, { messagingAppSecret: SECRET, messagingAllowUnsigned: true });
  const res = await deliver(app, raw);
  t.equal(res.statusCode, 401);
  t.same(res.json(), INVALID);
  t.same(inboxRows(app), []);
});
