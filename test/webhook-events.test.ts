// Administrators' view of stored callbacks: failed and dead events, paged, and the replay of one after a fix.
import t from 'tap';
import type { App } from '../src/app';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import { deliver, envelope, inboxRows, messageByWamid, messageCount, textItem } from './fixtures/webhooks';

const PHONE = '900000000000001';
const SECRET = 'events-secret';
const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const { app, logs } = await buildTestApp(t, { messagingAppSecret: SECRET });
  const admin = await createAdmin(app);
  const client = await createUser(app, { email: 'owner@example.com', messagingPhoneNumberId: PHONE });
  return { app, logs, admin: bearer(app, admin), client: bearer(app, client) };
}

const list = (app: App, query: string, headers: Record<string, string>) =>
  app.inject({ method: 'GET', url: `/api/webhook/events${query}`, headers });
const replay = (app: App, id: number | string, headers: Record<string, string>, payload?: object) =>
  app.inject({ method: 'POST', url: `/api/webhook/events/${id}/replay`, headers, ...(payload ? { payload } : {}) });

/** Events written straight into the inbox: `[state, attempts]` each, received one second apart. */
function seed(app: App, events: [string, number][]): number[] {
  const insert = app.db.$client.prepare(`INSERT INTO webhook_events (received_at, raw_body, state, error, attempts, processed_at)
    VALUES (?, ?, ?, ?, ?, ?)`);
  return events.map(([state, attempts], i) => Number(insert.run(
    Date.UTC(2026, 0, 1) + i * 1000, envelope(PHONE, { messages: [textItem(`wamid.seed.${i}`, '15551234567', 1767225600 + i, `m${i}`)] }),
    state, state === 'processed' ? null : `failure ${i}`, attempts, Date.UTC(2026, 0, 2) + i * 1000,
  ).lastInsertRowid));
}

t.test('only administrators: CLIENT 403, no session 401', async (t) => {
  const { app, client } = await setup(t);
  const [id] = seed(app, [['dead', 5]]);
  for (const call of [() => list(app, '', client), () => replay(app, id!, client)]) {
    t.same((await call()).json(), err(403, 'FORBIDDEN', 'Forbidden', 'Your role may not do this'));
  }
  for (const call of [() => list(app, '', {}), () => replay(app, id!, {})]) {
    const res = await call();
    t.equal(res.statusCode, 401);
    t.same(res.json(), err(401, 'UNAUTHORIZED', 'Unauthorized', 'Authentication required'));
  }
  t.match(inboxRows(app), [{ state: 'dead', attempts: 5 }], 'nothing replayed');
});

t.test('bad query values and ids are 400s; an unknown id is a 404', async (t) => {
  const { app, admin } = await setup(t);
  const queries = ['?state=pending', '?state=processed', '?state=', '?limit=0', '?limit=201', '?limit=abc', '?limit=1.5', '?limit=1e2',
    '?before_id=0', '?before_id=-1', '?before_id=x', '?before_id=9007199254740993', '?page=2'];
  for (const query of queries) {
    const res = await list(app, query, admin);
    t.equal(res.statusCode, 400, query);
    t.match(res.json(), { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message: /^querystring\// }, query);
  }
  for (const id of ['abc', '0', '-1', '1.5', '01']) {
    const res = await replay(app, id, admin);
    t.equal(res.statusCode, 400, id);
    t.match(res.json(), { code: 'VALIDATION_ERROR', message: /^params\/id must / }, id);
  }
  const extra = await replay(app, 1, admin, { force: true });
  t.same(extra.json(), err(400, 'VALIDATION_ERROR', 'Bad Request', 'body/force is not an allowed property'));
  const unknown = await replay(app, 12345, admin);
  t.equal(unknown.statusCode, 404);
  t.same(unknown.json(), err(404, 'WEBHOOK_EVENT_NOT_FOUND', 'Not Found', 'No stored webhook event has this id'));
});

t.test('failed and dead events, newest first, paged with limit and before_id; processed ones never listed', async (t) => {
  const { app, admin } = await setup(t);
  const states: [string, number][] = [['failed', 1], ['processed', 1], ['dead', 5], ['failed', 2], ['failed', 3], ['processed', 2],
    ['dead', 5], ['failed', 1], ['pending', 0], ['failed', 4], ['dead', 6]];
  const ids = seed(app, states);
  const expected = (wanted: string[]) => ids.filter((_, i) => wanted.includes(states[i]![0])).reverse();

  const walk = async (query: string) => {
    const seen: number[] = [];
    let next: number | null = null;
    let pages = 0;
    do {
      const res = await list(app, `?limit=3${query}${next === null ? '' : `&before_id=${next}`}`, admin);
      t.equal(res.statusCode, 200);
      const body = res.json() as { events: { id: number }[]; next_before_id: number | null };
      t.ok(body.events.length <= 3);
      seen.push(...body.events.map((e) => e.id));
      next = body.next_before_id;
      pages += 1;
    } while (next !== null && pages < 10);
    return seen;
  };
  t.same(await walk(''), expected(['failed', 'dead']), 'both states by default, each once');
  t.same(await walk('&state=dead'), expected(['dead']));
  t.same(await walk('&state=failed'), expected(['failed']));

  const first = await list(app, '?limit=1', admin);
  const raw = inboxRows(app).find((e) => e.id === ids[10])!.rawBody;
  t.same(first.json(), {
    events: [{ id: ids[10], state: 'dead', attempts: 6, received_at: '2026-01-01T00:00:10.000Z', processed_at: '2026-01-02T00:00:10.000Z',
      error: 'failure 10', raw_bytes: Buffer.byteLength(raw) }],
    next_before_id: ids[10],
  });
  t.same((await list(app, '?state=dead&limit=3', admin)).json().next_before_id, null, 'exactly one full page: no next page');
  t.same((await list(app, `?before_id=${ids[0]}`, admin)).json(), { events: [], next_before_id: null });
});

t.test('a dead event replayed after the fix is processed; replaying again changes nothing', async (t) => {
  const { app, admin, logs } = await setup(t);
  app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.boom'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  const poison = envelope(PHONE, { messages: [textItem('wamid.boom', '15551234567', 1767225601, 'boom')] });
  t.equal((await deliver(app, poison, SECRET)).statusCode, 200);
  for (let run = 0; run < 4; run++) await app.webhookReplay.run();
  const [dead] = (await list(app, '?state=dead', admin)).json().events;
  t.match(dead, { state: 'dead', attempts: 5, error: 'entry[0].changes[0].messages[0]: injected failure' });

  const stillBroken = await replay(app, dead.id, admin);
  t.equal(stillBroken.statusCode, 200);
  t.match(stillBroken.json(), { id: dead.id, state: 'dead', attempts: 6, error: 'entry[0].changes[0].messages[0]: injected failure' });
  t.equal(messageByWamid(app, 'wamid.boom'), undefined);

  app.db.$client.exec('DROP TRIGGER temp.boom'); // the fix
  const fixed = await replay(app, dead.id, admin);
  t.equal(fixed.statusCode, 200);
  t.same(fixed.json(), {
    id: dead.id, state: 'processed', attempts: 7, received_at: dead.received_at, processed_at: fixed.json().processed_at,
    error: null, raw_bytes: Buffer.byteLength(poison),
  });
  t.match(fixed.json().processed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(messageByWamid(app, 'wamid.boom')?.text, 'boom');
  t.same((await list(app, '', admin)).json(), { events: [], next_before_id: null });
  t.match(logs(), /"webhookEventId":\d+,"state":"processed","attempts":7,"msg":"webhook event replayed by an administrator"/);

  // Replaying a processed event (e.g. after setting a user's phone number id) is safe: duplicates change nothing.
  const again = await replay(app, dead.id, admin, {});
  t.match(again.json(), { state: 'processed', attempts: 8 });
  t.equal(messageCount(app), 1);
  t.same((await app.webhookReplay.run()), { events: 0, failed: 0, dead: 0 });
});
