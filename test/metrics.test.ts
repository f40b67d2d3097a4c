// GET /metrics: the counters and gauges move with real traffic (sends through the sandbox, signed callbacks), and only
// the METRICS_TOKEN bearer or an ADMIN session may read them.
import t from 'tap';
import { parseConfig, ConfigError } from '../src/config';
import { sendingApp, TO } from './fixtures/sending';
import { deliver, envelope, statusItem, textItem } from './fixtures/webhooks';
import { bearer, buildTestApp, createAdmin, createUser } from './helper';
import type { App } from '../src/app';

const METRICS_TOKEN = 'scraper-token-0123456789abcdef';
const SECRET = 'app-secret-for-metrics';
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const scrape = (app: App, headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }) =>
  app.inject({ method: 'GET', url: '/metrics', headers });

/** The value of one series (`name{labels}` exactly as exposed), or undefined when it is not exposed. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function values(app: App, series: string[]): Promise<Record<string, number | undefined>> {
  const res = await scrape(app);
  if (res.statusCode !== 200) throw new Error(`scrape answered ${res.statusCode}`);
  return Object.fromEntries(series.map((s) => [s, sample(res.body, s)]));
}

t.test('sends move the counters by outcome and network code, the latency histogram and the credits used', async (t) => {
  const { app, sandbox, sendText } = await sendingApp(t, { credits: 3, config: { metricsToken: METRICS_TOKEN } });
  const series = [
    'gateway_sends_total{outcome="accepted"}', 'gateway_sends_total{outcome="replayed"}',
    'gateway_sends_total{outcome="MESSAGING_REJECTED"}', 'gateway_sends_total{outcome="CREDITS_EXHAUSTED"}',
    'gateway_network_calls_total{result="accepted",code=""}', 'gateway_network_calls_total{result="rejected",code="131026"}',
    'gateway_network_call_duration_seconds_count{result="accepted"}', 'gateway_network_call_duration_seconds_count{result="rejected"}',
    'gateway_credits_used',
  ];
  t.same(Object.values(await values(app, series)), [...Array(8).fill(undefined), 0], 'nothing counted before any traffic');

  t.equal((await sendText('one')).statusCode, 201);
  sandbox.enqueue({ kind: 'fail', error: 'undeliverable' });
  t.equal((await sendText('refused')).statusCode, 502);
  t.equal((await sendText('two', { 'idempotency-key': 'k-1' })).statusCode, 201);
  const again = await sendText('two', { 'idempotency-key': 'k-1' });
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal((await sendText('three')).statusCode, 201);
  t.equal((await sendText('over')).statusCode, 402);

  t.same(await values(app, series), {
    'gateway_sends_total{outcome="accepted"}': 3, 'gateway_sends_total{outcome="replayed"}': 1,
    'gateway_sends_total{outcome="MESSAGING_REJECTED"}': 1, 'gateway_sends_total{outcome="CREDITS_EXHAUSTED"}': 1,
    'gateway_network_calls_total{result="accepted",code=""}': 3, 'gateway_network_calls_total{result="rejected",code="131026"}': 1,
    'gateway_network_call_duration_seconds_count{result="accepted"}': 3, 'gateway_network_call_duration_seconds_count{result="rejected"}': 1,
    gateway_credits_used: 3,
  });
  t.equal(sandbox.requests.length, 4, 'replay and exhausted credits never reached the network');
  const body = (await scrape(app)).body;
  t.ok(sample(body, 'gateway_network_call_duration_seconds_sum{result="accepted"}')! > 0, 'durations are summed');
  t.equal(sample(body, 'gateway_network_call_duration_seconds_bucket{le="+Inf",result="accepted"}'), 3);
});

t.test('an unreachable network is counted under its reason', async (t) => {
  const { app, sandbox, sendText } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN } });
  await sandbox.close();
  t.equal((await sendText()).statusCode, 504);
  const got = await values(app, ['gateway_sends_total{outcome="MESSAGING_UNAVAILABLE"}', 'gateway_network_calls_total{result="unavailable",code="unreachable"}']);
  t.equal(got['gateway_sends_total{outcome="MESSAGING_UNAVAILABLE"}'], 1);
  t.ok(got['gateway_network_calls_total{result="unavailable",code="unreachable"}']! >= 1, 'each attempt (retries included) is a call');
});

t.test('a keyed failure repeated counts as replayed, not as its error again', async (t) => {
  const { app, sandbox, sendText } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN } });
  sandbox.enqueue({ kind: 'fail', error: 'undeliverable' });
  t.equal((await sendText('refused', { 'idempotency-key': 'k-fail' })).statusCode, 502);
  const again = await sendText('refused', { 'idempotency-key': 'k-fail' });
  t.equal(again.statusCode, 502);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.same(await values(app, ['gateway_sends_total{outcome="MESSAGING_REJECTED"}', 'gateway_sends_total{outcome="replayed"}']), {
    'gateway_sends_total{outcome="MESSAGING_REJECTED"}': 1, 'gateway_sends_total{outcome="replayed"}': 1,
  });
});

t.test('callbacks: received, processed, failed, dead, and the backlog by state', async (t) => {
  const { app, user } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN, messagingAppSecret: SECRET } });
  const phone = user.messagingPhoneNumberId!;
  const series = [
    'gateway_webhook_callbacks_received_total', 'gateway_webhook_events_total{state="processed"}',
    'gateway_webhook_events_total{state="failed"}', 'gateway_webhook_events_total{state="dead"}',
    'gateway_webhook_backlog{state="pending"}', 'gateway_webhook_backlog{state="failed"}', 'gateway_webhook_backlog{state="dead"}',
  ];
  t.same(Object.values(await values(app, series)), [0, undefined, undefined, undefined, 0, 0, 0]);

  t.equal((await deliver(app, envelope(phone, { messages: [textItem('wamid.in1', TO, 1767225600, 'hello')] }), SECRET)).statusCode, 200);
  t.equal((await deliver(app, envelope(phone, { statuses: [statusItem('wamid.unknown', 'sent', 1767225601)] }), SECRET)).statusCode, 200);
  t.equal((await deliver(app, envelope(phone, {}), 'wrong-secret')).statusCode, 401, 'a forged callback');
  // A storage fault on one message: its event fails, and is processed again in the background until it is dead.
  app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.boom'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  t.equal((await deliver(app, envelope(phone, { messages: [textItem('wamid.boom', TO, 1767225602, 'boom')] }), SECRET)).statusCode, 200);
  t.same(Object.values(await values(app, series)), [3, 2, 1, undefined, 0, 1, 0], 'the forged callback is not counted');

  for (let run = 0; run < 4; run++) await app.webhookReplay.run();
  t.same(Object.values(await values(app, series)), [3, 2, 4, 1, 0, 0, 1], 'four failed runs, then dead');
});

t.test('callbacks sharing a write with one that fails: each stored with its own outcome and counted once', async (t) => {
  const { app, user } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN, messagingAppSecret: SECRET } });
  const phone = user.messagingPhoneNumberId!;
  const series = ['gateway_webhook_events_total{state="processed"}', 'gateway_webhook_events_total{state="failed"}'];
  app.db.$client.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.messages WHEN NEW.wamid = 'wamid.boom'
    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  const before = app.writer.stats();
  // Delivered together, they share one write: the first run of it hits the failing message and runs again, isolated.
  const answers = await Promise.all(['wamid.ok1', 'wamid.boom', 'wamid.ok2'].map((wamid, i) =>
    deliver(app, envelope(phone, { messages: [textItem(wamid, TO, 1767225600 + i, `text ${i}`)] }), SECRET)));
  t.same(answers.map((a) => a.statusCode), [200, 200, 200]);
  t.match(app.writer.stats(), { batches: before.batches + 1, writes: before.writes + 3 }, 'one write held all three');
  const events = app.db.$client.prepare('SELECT state, error FROM webhook_events ORDER BY id').all() as { state: string; error: string | null }[];
  t.same(events.map((e) => e.state), ['processed', 'failed', 'processed']);
  t.match(events[1]!.error, /injected failure/);
  t.same(app.db.$client.prepare("SELECT wamid FROM messages WHERE direction = 'inbound' ORDER BY wamid").pluck().all(), ['wamid.ok1', 'wamid.ok2']);
  t.same(Object.values(await values(app, series)), [2, 1], 'each callback counted once, though the write ran twice');
});

t.test('database and WAL sizes are read at each scrape', async (t) => {
  const { app, sendText } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN } });
  const before = await values(app, ['gateway_database_bytes{file="database"}', 'gateway_database_bytes{file="wal"}']);
  t.ok(before['gateway_database_bytes{file="database"}']! > 0, 'the database file has a size');
  for (let i = 0; i < 3; i++) t.equal((await sendText(`grow ${i}`)).statusCode, 201);
  const after = await values(app, ['gateway_database_bytes{file="database"}', 'gateway_database_bytes{file="wal"}']);
  t.ok(after['gateway_database_bytes{file="wal"}']! > 0, 'writes go to the WAL first');
  t.ok(after['gateway_database_bytes{file="wal"}']! + after['gateway_database_bytes{file="database"}']!
    > before['gateway_database_bytes{file="wal"}']! + before['gateway_database_bytes{file="database"}']!, 'and the files grow');
});

t.test("the write-ahead log's syncs are counted, with their time", async (t) => {
  const { app, sendText } = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN } });
  const series = ['gateway_database_syncs{kind="all"}', 'gateway_database_syncs{kind="in_place"}', 'gateway_database_syncs{kind="slow"}',
    'gateway_database_sync_seconds'];
  const before = await values(app, series);
  for (const s of series) t.type(before[s], 'number', `${s} is exposed`);
  for (let i = 0; i < 3; i++) t.equal((await sendText(`sync ${i}`)).statusCode, 201);
  const after = await values(app, series);
  const all = after['gateway_database_syncs{kind="all"}']! - before['gateway_database_syncs{kind="all"}']!;
  // A send writes its message, then its outcome: at least one sync each, fewer when writes share a batch.
  t.ok(all >= 3, `${all} syncs for 3 sends`);
  t.ok(after['gateway_database_syncs{kind="in_place"}']! <= after['gateway_database_syncs{kind="all"}']!, 'in place: some of all');
  t.ok(after['gateway_database_syncs{kind="slow"}']! <= after['gateway_database_syncs{kind="all"}']!, 'slow: some of all');
  t.ok(after.gateway_database_sync_seconds! > before.gateway_database_sync_seconds!, 'their time grows');
});

t.test('who may read /metrics', async (t) => {
  const { app } = await buildTestApp(t, { metricsToken: METRICS_TOKEN });
  const admin = await createAdmin(app);
  const client = await createUser(app, { email: 'ana@example.com' });
  const refused = (status: number, code: string) => ({ statusCode: status, code, error: status === 401 ? 'Unauthorized' : 'Forbidden' });

  const none = await scrape(app, {});
  t.equal(none.statusCode, 401);
  t.match(none.json(), refused(401, 'UNAUTHORIZED'));
  const wrong = await scrape(app, { authorization: `Bearer ${METRICS_TOKEN}x` });
  t.equal(wrong.statusCode, 401, 'a wrong token');
  t.match(wrong.json(), refused(401, 'UNAUTHORIZED'));
  t.equal((await scrape(app, { authorization: METRICS_TOKEN })).statusCode, 401, 'the token without the Bearer scheme');
  t.equal((await scrape(app, { authorization: `Basic ${METRICS_TOKEN}` })).statusCode, 401);
  t.equal((await scrape(app, { authorization: `bearer ${METRICS_TOKEN}x` })).statusCode, 401, 'a wrong token, scheme in lower case');
  const asClient = await scrape(app, bearer(app, client));
  t.equal(asClient.statusCode, 403, 'a CLIENT session');
  t.match(asClient.json(), refused(403, 'FORBIDDEN'));

  // The auth scheme is case-insensitive (RFC 7235), as for sessions.
  for (const [who, headers] of [['the scraper token', { authorization: `Bearer ${METRICS_TOKEN}` }],
    ['the scraper token, scheme in lower case', { authorization: `bearer ${METRICS_TOKEN}` }],
    ['the scraper token, scheme in upper case', { authorization: `BEARER ${METRICS_TOKEN}` }], ['an ADMIN JWT', bearer(app, admin)],
    ['an ADMIN cookie', { cookie: `token=${app.issueToken(admin)}` }]] as const) {
    const res = await scrape(app, headers);
    t.equal(res.statusCode, 200, who);
    t.equal(res.headers['content-type'], CONTENT_TYPE);
    t.match(res.body, /^# HELP gateway_/m);
    t.notOk(res.body.includes(METRICS_TOKEN), 'the token is not exposed');
  }
});

t.test('without METRICS_TOKEN only ADMIN sessions read /metrics', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await createAdmin(app);
  t.equal((await scrape(app, { authorization: 'Bearer anything-at-all-0123456789' })).statusCode, 401);
  t.equal((await scrape(app, { authorization: 'Bearer ' })).statusCode, 401);
  t.equal((await scrape(app, bearer(app, admin))).statusCode, 200);
});

t.test('each app has its own registry; process metrics only when asked', async (t) => {
  const one = await sendingApp(t, { config: { metricsToken: METRICS_TOKEN } });
  const two = await buildTestApp(t, { metricsToken: METRICS_TOKEN }, { processMetrics: true });
  t.equal((await one.sendText()).statusCode, 201);
  t.equal(sample((await scrape(one.app)).body, 'gateway_sends_total{outcome="accepted"}'), 1);
  const other = (await scrape(two.app)).body;
  t.equal(sample(other, 'gateway_sends_total{outcome="accepted"}'), undefined, 'the other app counted nothing');
  t.ok(sample(other, 'process_resident_memory_bytes')! > 0, 'process metrics when asked');
  t.equal(sample((await scrape(one.app)).body, 'process_resident_memory_bytes'), undefined, 'and not otherwise');
});

t.test('METRICS_TOKEN is validated without echoing it', async (t) => {
  t.throws(() => parseConfig({ METRICS_TOKEN: 'short-secret' }), new ConfigError('Invalid METRICS_TOKEN: Expected string length greater or equal to 16'));
  t.equal(parseConfig({ METRICS_TOKEN: METRICS_TOKEN }).metricsToken, METRICS_TOKEN);
  t.equal(parseConfig({}).metricsToken, undefined);
});
