// End to end: the real process is SIGKILLed while signed callbacks pour in and an event endpoint holds its delivery
// (committed, not delivered). After the restart every acknowledged callback's messages have their events, numbered
// 1 … N with no gap, and the endpoint receives every one of them, in order, from its cursor.
import { once } from 'node:events';
import { createServer } from 'node:http';
import t from 'tap';
import { signBody } from '../src/webhooks/signature';
import { freePort, run, SERVER_TS, waitForHealth } from './fixtures/process';
import { tempDir } from './helper';
import { envelope, textItem } from './fixtures/webhooks';

const ADMIN = { email: 'root@example.com', password: 'e2e-admin-password' };
const SECRET = 'e2e-events-secret';
const PHONE = '900000000000041';
const CALLBACKS = 60;
const PER_CALLBACK = 3;

t.test('events of acknowledged callbacks survive SIGKILL with no gap, and are delivered after the restart', async (t) => {
  const dir = tempDir(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The receiver holds every request until told to answer.
  let answering = false;
  const delivered: number[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      if (!answering) return;
      delivered.push(...(JSON.parse(body) as { events: { id: number }[] }).events.map((e) => e.id));
      res.writeHead(200).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  t.teardown(() => { receiver.closeAllConnections(); receiver.close(); });
  const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const env = {
    PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: `${dir}/gateway.db`, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password,
    MESSAGING_APP_SECRET: SECRET, EVENT_ENDPOINTS_ALLOW_HTTP: 'true', EVENT_ENDPOINTS_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn',
  };
  const json = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

  const first = run(t, SERVER_TS, env);
  if (!t.ok(await waitForHealth(base, first.exited, Date.now() + 60_000), 'first start')) return t.comment(first.output());
  const admin = { cookie: (await json('POST', '/api/login', ADMIN)).headers.getSetCookie()[0]!.split(';')[0]! };
  const created = await json('POST', '/api/user/create', { email: 'bot@example.com', password: 'bot-password-123', messaging_phone_number_id: PHONE }, admin);
  const userId = (await created.json() as { id: number }).id;
  const key = (await (await json('POST', `/api/user/${userId}/keys`, { name: 'e2e' }, admin)).json() as { key: string }).key;
  const auth = { authorization: `Bearer ${key}` };
  t.equal((await json('POST', `/api/user/${userId}/event-endpoints`, { url: hookUrl }, auth)).status, 201);

  // Callbacks in flight; the process dies once some were acknowledged.
  const acknowledged: string[][] = [];
  const callbacks = Array.from({ length: CALLBACKS }, (_, i) => {
    const wamids = Array.from({ length: PER_CALLBACK }, (_, j) => `wamid.crash${i}.${j}`);
    const raw = envelope(PHONE, { messages: wamids.map((w) => textItem(w, '15551230005', 1_790_000_000 + i, w)) });
    return fetch(`${base}/api/messaging/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(raw, SECRET) }, body: raw })
      .then((res) => { if (res.status === 200) acknowledged.push(wamids); }, () => undefined);
  });
  const deadline = Date.now() + 30_000;
  while (acknowledged.length < CALLBACKS / 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  first.child.kill('SIGKILL');
  await first.exited;
  await Promise.all(callbacks);
  t.ok(acknowledged.length >= CALLBACKS / 3, `${acknowledged.length} callbacks acknowledged before the kill`);
  t.same(delivered, [], 'nothing was delivered before the kill');
  answering = true;

  const second = run(t, SERVER_TS, env);
  if (!t.ok(await waitForHealth(base, second.exited, Date.now() + 60_000), 'second start')) return t.comment(second.output());
  const page = await (await fetch(`${base}/api/user/${userId}/events?after=0&limit=1000`, { headers: auth })).json() as {
    events: { id: number; type: string; data: { message: { wamid: string } } }[]; has_more: boolean;
  };
  const ids = page.events.map((e) => e.id);
  t.same(ids, Array.from({ length: ids.length }, (_, i) => i + 1), 'numbered 1 … N with no gap');
  const wamids = new Set(page.events.map((e) => e.data.message.wamid));
  const missing = acknowledged.flat().filter((w) => !wamids.has(w));
  t.same(missing, [], 'every acknowledged message has its event');
  t.equal(new Set(page.events.map((e) => e.data.message.wamid)).size, ids.length, 'one event per stored message');

  const deliveredBy = Date.now() + 60_000;
  while (Math.max(0, ...delivered) < ids.length && Date.now() < deliveredBy) await new Promise((resolve) => setTimeout(resolve, 50));
  t.same([...new Set(delivered)].sort((a, b) => a - b), ids, 'every event delivered after the restart (at least once), in order');
  t.same(delivered.filter((id, i) => i > 0 && id < delivered[i - 1]!), [], 'never out of order');

  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
