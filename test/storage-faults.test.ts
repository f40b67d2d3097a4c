// Storage faults (disk full, read-only file): every write answers 503 STORAGE_UNAVAILABLE with Retry-After (the cause
// only in the log, /readyz and /metrics), reads keep working, and the gateway recovers by itself; a tiny probe write
// never makes it ready while callbacks fail; low free space is STORAGE_LOW. A send the network accepted is never sent twice.
// The faults are SQLite's own: `max_page_count` (the file may not grow: SQLITE_FULL) and `query_only` (SQLITE_READONLY),
// set on the app's own connection; and a real I/O error: this test process's file-size limit lowered to 0 with
// `prlimit`, so every write(2) fails with EFBIG, which SQLite reports as SQLITE_IOERR_*.
import { execFileSync } from 'node:child_process';
import t from 'tap';
import type { App } from '../src/app';
import { sendingApp, TO } from './fixtures/sending';
import { deliver, envelope, inboxRows, textItem } from './fixtures/webhooks';
import { bearer, buildTestApp, createAdmin } from './helper';
import { freeBytes } from '../src/support/free-space';

const SECRET = 'storage-secret';
const until = async (what: string, check: () => boolean | Promise<boolean>) => {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
const ready = (app: App) => app.inject({ method: 'GET', url: '/readyz' });
// The same for every cause: a client is not told about the gateway's disks.
const STORAGE_503 = {
  statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
  message: 'The gateway cannot store data right now; nothing was changed, retry later',
};
const logged = (logs: string, msg: string) => logs.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.msg === msg);
const newUser = (i: number) => ({ email: `new${i}@example.com`, password: 'long enough password' });

async function setup(t: tap.Test) {
  const ctx = await sendingApp(t, { credits: 100, config: { messagingAppSecret: SECRET } });
  const admin = await createAdmin(ctx.app);
  const asAdmin = bearer(ctx.app, admin);
  const createUser = (i: number) => ctx.app.inject({ method: 'POST', url: '/api/user/create', headers: asAdmin, payload: newUser(i) });
  const callback = (wamid: string, body = 'hello') => deliver(ctx.app, envelope(ctx.user.messagingPhoneNumberId!, {
    messages: [textItem(wamid, '15557654321', 1767225600, body)] }), SECRET);
  const reads = async () => [
    (await ctx.app.inject({ method: 'GET', url: '/api/me', headers: ctx.auth })).statusCode,
    (await ctx.app.inject({ method: 'GET', url: `/api/user/${ctx.user.id}/conversations`, headers: ctx.auth })).statusCode,
    (await ctx.app.inject({ method: 'GET', url: '/api/users', headers: asAdmin })).statusCode,
  ];
  return { ...ctx, createUser, callback, reads };
}

t.test('a read-only database: every write 503 with Retry-After, readyz 503 with the reason, reads 200; back without a restart', async (t) => {
  const { app, sandbox, user, sendText, createUser, callback, reads, logs } = await setup(t);
  t.equal((await sendText('before')).statusCode, 201);
  t.equal((await ready(app)).statusCode, 200);

  app.db.$client.pragma('query_only = ON');
  const answers = [await sendText('during'), await createUser(1), await callback('wamid.during')];
  for (const res of answers) {
    t.equal(res.statusCode, 503);
    t.equal(res.headers['retry-after'], '10');
    t.same(res.json(), STORAGE_503);
  }
  t.equal(sandbox.requests.length, 1, 'nothing sent: the credit could not be reserved');
  const probe = await ready(app);
  t.equal(probe.statusCode, 503);
  t.same(probe.json(), {
    statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
    message: 'The database does not take writes: the database file is read-only (SQLITE_READONLY)',
  });
  t.same(await reads(), [200, 200, 200], 'reads keep working');
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 1);

  app.db.$client.pragma('query_only = OFF');
  // The probe write commits now, but the failed callback and send have not been written since: not ready yet.
  const batches = app.writer.stats().batches;
  await until('a readiness probe committed', async () => (await ready(app), app.writer.stats().batches > batches));
  t.match((await ready(app)).json(), { code: 'STORAGE_UNAVAILABLE', message: /read-only/ });
  t.equal((await sendText('after')).statusCode, 201);
  t.same((await ready(app)).json(), { status: 'ready' }, 'a send stored again: ready');
  t.equal((await createUser(1)).statusCode, 201);
  t.equal((await callback('wamid.during')).statusCode, 200, 'the redelivered callback is stored now');
  t.match(inboxRows(app), [{ state: 'processed' }]);
  t.equal(logged(logs(), 'storage refuses writes: every write answers 503 until it is fixed').length, 1, 'the fault is logged once');
  t.equal(logged(logs(), 'storage takes writes again').length, 1);
});

/** Sets this process's soft limit on the size of a file it writes (`unlimited` or bytes): past it, write(2) fails. */
const fileSizeLimit = (limit: string) => execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${limit}:`]);

t.test('an I/O error: every write 503 with Retry-After, readyz 503 with the reason, reads 200; back without a restart', async (t) => {
  const { app, sandbox, user, sendText, createUser, callback, reads, logs } = await setup(t);
  t.equal((await sendText('before')).statusCode, 201);
  t.equal((await ready(app)).statusCode, 200);

  // Each refused write also raises SIGXFSZ: a listener of our own keeps tap's exit handler from ending the process on it.
  const ignore = () => undefined;
  process.on('SIGXFSZ', ignore);
  fileSizeLimit('0');
  t.teardown(() => {
    fileSizeLimit('unlimited');
    process.off('SIGXFSZ', ignore);
  });
  const answers = [await sendText('during'), await createUser(1), await callback('wamid.during')];
  for (const res of answers) {
    t.equal(res.statusCode, 503);
    t.equal(res.headers['retry-after'], '10');
    t.same(res.json(), STORAGE_503, 'the client is not told the cause');
  }
  t.equal(sandbox.requests.length, 1, 'nothing sent: the credit could not be reserved');
  const probe = await ready(app);
  t.equal(probe.statusCode, 503);
  t.match(probe.json(), {
    statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
    message: /^The database does not take writes: the disk reports an I\/O error \(SQLITE_IOERR(_[A-Z]+)?\)$/,
  });
  t.same(await reads(), [200, 200, 200], 'reads keep working');
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 1);
  t.same(inboxRows(app), [], 'the callback was not stored (the network delivers it again)');

  fileSizeLimit('unlimited');
  // The probe commits again by itself, but the failed send and callback have not been written since: not ready yet.
  const batches = app.writer.stats().batches;
  await until('a readiness probe committed', async () => (await ready(app), app.writer.stats().batches > batches));
  t.match((await ready(app)).json(), { code: 'STORAGE_UNAVAILABLE', message: /I\/O error/ });
  t.equal((await sendText('after')).statusCode, 201);
  t.same((await ready(app)).json(), { status: 'ready' }, 'a send stored again: ready');
  t.equal((await createUser(1)).statusCode, 201);
  t.equal((await callback('wamid.during')).statusCode, 200, 'the redelivered callback is stored now');
  t.match(inboxRows(app), [{ state: 'processed' }]);
  t.equal(app.db.$client.pragma('integrity_check', { simple: true }), 'ok', 'the file is whole');
  t.equal(logged(logs(), 'storage refuses writes: every write answers 503 until it is fixed').length, 1, 'the fault is logged once');
  t.equal(logged(logs(), 'storage takes writes again').length, 1);
});

t.test('a full disk: callbacks and sends that need space get 503, nothing half-stored; space back, they are taken', async (t) => {
  const { app, sandbox, user, sendText, callback, reads } = await setup(t);
  t.equal((await sendText('before')).statusCode, 201);
  const client = app.db.$client;
  // No free pages inside the file either (a migration that drops a table leaves some): a full disk leaves none.
  client.exec('VACUUM');
  const pages = client.pragma('page_count', { simple: true }) as number;
  client.pragma(`max_page_count = ${pages}`);
  // Rows larger than a page need fresh pages, which the file may not grow to hold.
  const big = 'x'.repeat(4096);
  const [send, hook] = [await sendText(big), await callback('wamid.big', 'y'.repeat(200_000))];
  for (const res of [send, hook]) {
    t.equal(res.statusCode, 503);
    t.equal(res.headers['retry-after'], '10');
    t.same(res.json(), STORAGE_503);
  }
  t.equal(sandbox.requests.length, 1, 'the big send never reached the network');
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 1, 'and took no credit');
  t.same(inboxRows(app), []);
  t.match((await ready(app)).json(), { code: 'STORAGE_UNAVAILABLE', message: 'The database does not take writes: the disk is full (SQLITE_FULL)' });
  t.same(await reads(), [200, 200, 200]);

  client.pragma(`max_page_count = ${pages + 10_000}`);
  t.equal((await sendText(big)).statusCode, 201);
  t.equal((await ready(app)).statusCode, 200);
  t.equal((await callback('wamid.big', 'y'.repeat(200_000))).statusCode, 200);
  t.equal(sandbox.requests.length, 2);
});

t.test('accepted by the network, not storable: 503 with wamid and sent:true, a repeat never sends again, stored once space is back', async (t) => {
  let offset = 0;
  const ctx = await sendingApp(t, { options: { now: () => new Date(Date.now() + offset) } });
  const { app, sandbox, user, sendText } = ctx;
  t.equal((await sendText('warm-up')).statusCode, 201);
  const month = () => new Date(Date.now() + offset).toISOString().slice(0, 7);
  const key = { 'idempotency-key': 'order-77' };
  // The network answers with another wa_id (and a user id no contact has): storing its answer then needs new contact and
  // conversation rows.
  sandbox.addUser({ phone: TO, userId: 'US.999888777' });
  sandbox.enqueue({ kind: 'accept', waId: '15550009999', delayMs: 300 });
  const first = sendText('Hi', key);
  await until('the send reached the network', () => sandbox.requests.length === 2);

  // The disk fills up while the network call is in flight: the file may not grow, and the conversations fill it.
  const client = app.db.$client;
  client.pragma(`max_page_count = ${client.pragma('page_count', { simple: true }) as number}`);
  const filler = client.prepare('INSERT INTO conversations (user_id, contact_wa_id, last_message_at) VALUES (?, ?, 0)');
  t.throws(() => { for (let i = 0; ; i++) filler.run(user.id, String(15559000000 + i)); }, { code: 'SQLITE_FULL' });

  const res = await first;
  t.equal(res.statusCode, 503);
  t.equal(res.headers['retry-after'], '10');
  const body = res.json();
  t.match(body, { statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable', id: Number, wamid: /^wamid\./, sent: true,
    message: /^The message was sent \(wamid wamid\.[^)]+\) but the gateway cannot store that right now; do not send it again/ });
  const { id, wamid } = body as { id: number; wamid: string };
  t.match(app.messagesRepo.findById(id), { status: 'pending', wamid: null });
  t.equal((await ready(app)).statusCode, 503);

  const repeat = await sendText('Hi', key);
  t.equal(repeat.statusCode, 502);
  t.same(repeat.json(), {
    statusCode: 502, code: 'MESSAGING_OUTCOME_UNKNOWN', error: 'Bad Gateway', id, wamid, sent: true,
    message: `The first request with this Idempotency-Key sent message ${id} (wamid ${wamid}) but its outcome is not stored yet; do not send it again`,
  });
  t.equal(sandbox.requests.length, 2, 'no second network call');

  // The settle job, even past the send budget, leaves a send whose outcome this process is still storing.
  offset = 10 * 60_000;
  t.equal(await app.settleInterrupted.run(), 0);
  t.match(app.messagesRepo.findById(id), { status: 'pending' });

  client.pragma('max_page_count = 1000000');
  await until('the answer is stored in the background', () => app.messagesRepo.findById(id)?.status === 'accepted');
  t.match(app.messagesRepo.findById(id), { status: 'accepted', wamid, errorJson: null });
  t.equal(app.messagesRepo.conversationOf(id)?.contactWaId, '15550009999');
  t.equal(app.creditsRepo.used(user.id, month()), 2, 'stays charged');
  t.equal(await app.settleInterrupted.run(), 0, 'accepted: never settled as interrupted');
  const replay = await sendText('Hi', key);
  t.equal(replay.statusCode, 201);
  t.match(replay.json(), { id, wamid, status: 'accepted' });
  t.equal(sandbox.requests.length, 2);
  await until('readyz 200', async () => (await ready(app)).statusCode === 200);
});

t.test('a full disk with a tiny probe: the probe fits the last free pages, callbacks do not; /readyz stays 503 until one is stored', async (t) => {
  const { app, callback, logs } = await setup(t);
  const admin = await createAdmin(app, 'metrics@example.com');
  const metrics = async () => (await app.inject({ method: 'GET', url: '/metrics', headers: bearer(app, admin) })).body;
  const client = app.db.$client;
  const pages = client.pragma('page_count', { simple: true }) as number;
  // Room for a table's page or two (what the probe needs), not for a callback of 200 kB.
  client.pragma(`max_page_count = ${pages + 2}`);
  const big = 'y'.repeat(200_000);
  const hook = await callback('wamid.big', big);
  t.equal(hook.statusCode, 503);
  t.same(hook.json(), STORAGE_503);
  t.match(logged(logs(), 'storage refuses writes: every write answers 503 until it is fixed'), [{ code: 'SQLITE_FULL', reason: 'the disk is full' }],
    'the cause is in the log');
  t.match(await metrics(), /^gateway_storage_writable 0$/m);
  t.match(await metrics(), /^gateway_storage_fault\{code="SQLITE_FULL"\} 1$/m);

  const batches = app.writer.stats().batches;
  await until('a readiness probe committed', async () => (await ready(app), app.writer.stats().batches > batches));
  const probe = await ready(app);
  t.equal(probe.statusCode, 503, 'the probe fitted, the callback would not: not ready');
  t.same(probe.json(), { statusCode: 503, code: 'STORAGE_UNAVAILABLE', error: 'Service Unavailable',
    message: 'The database does not take writes: the disk is full (SQLITE_FULL)' });
  t.equal((await callback('wamid.big', big)).statusCode, 503, 'and indeed callbacks still fail');
  t.equal((await ready(app)).statusCode, 503);

  client.pragma(`max_page_count = ${pages + 10_000}`);
  t.equal((await callback('wamid.big', big)).statusCode, 200, 'the network redelivers it: stored');
  t.same((await ready(app)).json(), { status: 'ready' });
  t.match(await metrics(), /^gateway_storage_writable 1$/m);
  t.notMatch(await metrics(), /^gateway_storage_fault\{/m);
});

t.test('free space below STORAGE_MIN_FREE_MB: /readyz 503 STORAGE_LOW, /metrics shows the free bytes', async (t) => {
  const { app, config } = await buildTestApp(t, { storageMinFreeMb: 1_048_576, metricsToken: 'metrics-token-0123456789' });
  const res = await ready(app);
  t.equal(res.statusCode, 503);
  t.equal(res.headers['retry-after'], '10');
  t.match(res.json(), { statusCode: 503, code: 'STORAGE_LOW', error: 'Service Unavailable',
    message: /^The database's filesystem has [0-9]+ MiB free, below STORAGE_MIN_FREE_MB \(1048576 MiB\): free some space before writes fail$/ });
  const told = Number(/has ([0-9]+) MiB/.exec(res.json().message)?.[1]);
  t.ok(Math.abs(told - freeBytes(config.databasePath) / 1024 / 1024) < 64, `${told} MiB is the filesystem's free space`);
  const scraped = (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789' } })).body;
  const gauge = Number(/^gateway_storage_free_bytes ([0-9.e+]+)$/m.exec(scraped)?.[1]);
  t.ok(gauge > 0 && Math.abs(gauge - freeBytes(config.databasePath)) < 64 * 1024 * 1024, `the gauge (${gauge}) is the filesystem's free space`);

  const roomy = await buildTestApp(t, { storageMinFreeMb: 0 });
  t.same((await ready(roomy.app)).json(), { status: 'ready' }, 'the same filesystem with no floor: ready');
});
