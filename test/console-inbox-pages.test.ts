// The console's API access pages and queue through inject: a user's own API keys and event endpoints under /inbox
// (every action a call of the JSON API), their audit rows (never a secret), the operations page's endpoints and
// queues, and a user's page with its send queue (cancel) and sending rate. Bad inputs and wrong users included.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../src/app';
import { buildTestApp, createAdmin, createUser } from './helper';
import { inbound } from './fixtures/conversations';

// Afternoon in Lisbon, 21 November 2026.
const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const PHONE = '106540352242922';
const TOKEN = 'EAAG-very-secret-token-7Q2x';
const err = (statusCode: number, code: string, error: string, message: string) => ({ statusCode, code, error, message });

/** A receiver on loopback that answers every delivery with `status`. */
async function receiver(t: Test, status: number) {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/secret-path-part?sig=abc`;
}

async function setup(t: Test) {
  const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', eventEndpointsAllowHttp: true, eventEndpointsAllowedCidrs: ['127.0.0.0/8'] },
    { now: () => new Date(NOW) });
  const admin = await createAdmin(app);
  const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: PHONE, messagingToken: TOKEN, monthlyCredits: 100 });
  const other = await createUser(app, { email: 'other@example.com' });
  const cookie = (user: { id: number } & Parameters<App['issueToken']>[0]) => ({ cookie: `token=${app.issueToken(user)}` });
  const page = (url: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });
  const call = (method: 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
    app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
  return { app, admin, shop, other, cookie, page, call };
}

const isPage = (t: Test, res: LightMyRequestResponse, status: number, text: RegExp) => {
  t.equal(res.statusCode, status);
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  t.match(res.body, text);
};
const auditRows = (app: App) => app.db.$client.prepare(`SELECT actor_user_id AS actor, action, target_user_id AS target,
  details_json AS details, client_ip AS ip FROM audit_log WHERE action LIKE 'key.%' OR action LIKE 'endpoint.%' ORDER BY id`).all() as
  { actor: number | null; action: string; target: number | null; details: string; ip: string | null }[];

t.test('/inbox/access: a CLIENT creates a key (shown once), sees it by its last 4, revokes it; each change audited without the key', async (t) => {
  const { app, admin, shop, other, cookie, page, call } = await setup(t);
  const empty = await page('/inbox/access', cookie(shop));
  isPage(t, empty, 200, /<h1>API access<\/h1>/);
  t.match(empty.body, /<a href="\/inbox\/access" aria-current="page">API access<\/a>/, 'in the inbox navigation');
  t.match(empty.body, /<h2 id="keys-title">API keys <span class="muted small">\(0 of 20\)<\/span><\/h2>/);
  t.match(empty.body, /No API key yet\./);
  t.match(empty.body, /<form class="api-form" data-method="POST" data-url="\/api\/user\/2\/keys" data-after="secret" data-field="key" data-output="new-key" novalidate>/);
  t.match(empty.body, /<label for="key-name">New key's name<\/label>\s*<input id="key-name" name="name"/, 'a labelled field');
  t.match(empty.body, /<script src="\/admin\/static\/console\.js" defer><\/script>/);
  t.match(empty.body, /No event endpoint yet\./);
  t.notMatch(empty.body, /<script>/, 'no inline script');

  // The form's call, as console.js makes it: the session cookie, the JSON API.
  const created = await call('POST', `/api/user/${shop.id}/keys`, cookie(shop), { name: 'support bot' });
  t.equal(created.statusCode, 201);
  const { key, id } = created.json() as { key: string; id: number };
  const listed = await page('/inbox/access', cookie(shop));
  t.match(listed.body, /<td data-label="Name"><strong>support bot<\/strong><\/td>\s*<td data-label="Ends in"><code>…(.{4})<\/code><\/td>/);
  t.ok(listed.body.includes(`<code>…${key.slice(-4)}</code>`), 'its last 4');
  t.notOk(listed.body.includes(key.slice(4, 40)), 'never the key');
  t.match(listed.body, new RegExp(`data-method="DELETE" data-url="/api/user/${shop.id}/keys/${id}" data-body="none" data-after="reload"`));
  t.match(listed.body, /aria-label="Revoke the key support bot">Revoke<\/button>/);
  t.match(listed.body, /<td data-label="Last used"><span class="muted">never<\/span><\/td>/);

  // Another CLIENT sees nothing of it: its page shows its own (none) and the API refuses the other user's id.
  t.notMatch((await page('/inbox/access', cookie(other))).body, /<strong>support bot<\/strong>/);
  const foreign = await call('DELETE', `/api/user/${shop.id}/keys/${id}`, cookie(other));
  t.equal(foreign.statusCode, 403);
  t.same(foreign.json(), err(403, 'FORBIDDEN', 'Forbidden', 'You may only use your own keys, events and endpoints'));
  t.equal((await call('POST', `/api/user/${shop.id}/keys`, cookie(other), { name: 'x' })).statusCode, 403);
  const bad = await call('POST', `/api/user/${shop.id}/keys`, cookie(shop), { name: '' });
  t.equal(bad.statusCode, 400, 'the API checks the form');
  t.equal(bad.json().code, 'VALIDATION_ERROR');

  const revoked = await call('DELETE', `/api/user/${shop.id}/keys/${id}`, cookie(shop));
  t.equal(revoked.statusCode, 204);
  t.equal((await call('DELETE', `/api/user/${shop.id}/keys/${id}`, cookie(shop))).statusCode, 404, 'gone');
  t.match((await page('/inbox/access', cookie(shop))).body, /No API key yet\./);

  t.same(auditRows(app), [
    { actor: shop.id, action: 'key.created', target: shop.id, details: JSON.stringify({ key_id: id, name: 'support bot' }), ip: '127.0.0.1' },
    { actor: shop.id, action: 'key.revoked', target: shop.id, details: JSON.stringify({ key_id: id, name: 'support bot' }), ip: '127.0.0.1' },
  ], 'created and revoked are audited; the refused calls are not');
  const everything = JSON.stringify(app.db.$client.prepare('SELECT * FROM audit_log').all());
  t.notOk(everything.includes(key.slice(4)), 'the key is in no audit row');
  const api = await app.inject({ method: 'GET', url: '/api/audit?limit=2', headers: cookie(admin) });
  t.equal(api.statusCode, 200);
  t.match(api.json().entries, [
    { action: 'key.revoked', actor: { user_id: shop.id, email: 'shop@example.com' }, target: { user_id: shop.id }, details: { key_id: id, name: 'support bot' }, client_ip: '127.0.0.1' },
    { action: 'key.created', details: { key_id: id, name: 'support bot' } },
  ], 'GET /api/audit has them, newest first');

  // Pages take a session only: no session → the login page; an API key opens no page.
  const anonymous = await page('/inbox/access', {});
  t.equal(anonymous.statusCode, 302);
  t.equal(anonymous.headers.location, '/admin/login?next=%2Finbox%2Faccess');
  const second = (await call('POST', `/api/user/${shop.id}/keys`, cookie(shop), { name: 'script' })).json() as { key: string };
  t.equal((await page('/inbox/access', { authorization: `Bearer ${second.key}` })).statusCode, 302);
  isPage(t, await page('/inbox/access?x=1', cookie(shop)), 400, /“x” is not a parameter of this page/);
});

t.test('/inbox/access: an event endpoint with its lag, last attempt and parked events; test ping, replay, disable, delete', async (t) => {
  const { app, shop, other, cookie, page, call } = await setup(t);
  const url = await receiver(t, 500);
  const created = await call('POST', `/api/user/${shop.id}/event-endpoints`, cookie(shop), { url, description: 'crm' });
  t.equal(created.statusCode, 201);
  const { id, secret } = created.json() as { id: number; secret: string };

  // Three events after the endpoint's cursor, the first parked, and a failed attempt with the next one later (one write: the
  // endpoint is never due on this fixed clock, so no delivery runs behind the test's back).
  await app.writer.write(() => {
    for (let i = 0; i < 3; i += 1) inbound(app, shop.id, { from: '351911111111', at: NOW - 120_000 });
    app.eventEndpointsRepo.park(id, 1, 400, NOW - 60_000);
    app.eventEndpointsRepo.settle(id, { lastAttemptAt: NOW - 30_000, lastStatus: 500, lastDurationMs: 12, lastError: 'HTTP 500', failures: 2, nextAttemptAt: NOW + 60_000 });
  });

  const res = await page('/inbox/access', cookie(shop));
  isPage(t, res, 200, /<h2 id="endpoints-title">Event endpoints <span class="muted small">\(1 of 5\)<\/span><\/h2>/);
  t.ok(res.body.includes(`<code class="wrap">${url.replaceAll('&', '&amp;')}</code>`), 'its URL');
  t.match(res.body, /<span class="badge badge-ok">delivering<\/span>\s*<span data-lag>2 events behind<\/span> · <span class="muted">crm<\/span>\s*· events: all/);
  t.match(res.body, /<dt>Delivered up to<\/dt><dd>event #1<\/dd>/);
  t.match(res.body, /<dt>Last attempt<\/dt><dd><time datetime="2026-11-21T14:59:30\.000Z" title="[^"]+">[^<]+<\/time> · failed, HTTP 500 in 12 ms<\/dd>/);
  t.match(res.body, /<dt>Failures in a row<\/dt><dd>2, next attempt <time datetime="2026-11-21T15:01:00\.000Z"/);
  t.match(res.body, new RegExp(`data-url="/api/user/${shop.id}/event-endpoints/${id}/parked/1/retry" data-after="attempt">\\s*Event #1 · HTTP 400 · parked`));
  t.match(res.body, new RegExp(`data-method="POST" data-url="/api/user/${shop.id}/event-endpoints/${id}/test" data-after="attempt"`));
  t.match(res.body, new RegExp(`data-method="PUT" data-url="/api/user/${shop.id}/event-endpoints/${id}" data-body='\\{"enabled":false\\}' data-after="reload">`));
  t.match(res.body, new RegExp(`data-url="/api/user/${shop.id}/event-endpoints/${id}/replay" data-after="reload" novalidate>\\s*<label for="replay-${id}">Deliver again every event after #</label>\\s*<input id="replay-${id}" name="after" type="number"[^>]* value="1"`));
  t.notOk(res.body.includes(secret), 'never the secret');

  // The page's actions are the API's: the ping reaches the receiver (500), a replay moves the cursor, bad input is the API's 400.
  const ping = await call('POST', `/api/user/${shop.id}/event-endpoints/${id}/test`, cookie(shop));
  t.equal(ping.statusCode, 200);
  t.match(ping.json(), { delivered: false, status: 500, error: 'HTTP 500' });
  const replay = await call('POST', `/api/user/${shop.id}/event-endpoints/${id}/replay`, cookie(shop), { after: 0 });
  t.equal(replay.statusCode, 200);
  t.equal(replay.json().lag, 3);
  t.equal((await call('POST', `/api/user/${shop.id}/event-endpoints/${id}/replay`, cookie(shop), { after: -1 })).statusCode, 400);
  t.equal((await call('POST', `/api/user/${shop.id}/event-endpoints/${id}/replay`, cookie(other), { after: 0 })).statusCode, 403, 'not another CLIENT');
  t.notMatch((await page('/inbox/access', cookie(other))).body, /crm/, "another CLIENT's page shows none of it");
  t.equal((await call('PUT', `/api/user/${shop.id}/event-endpoints/${id}`, cookie(shop), { enabled: false })).statusCode, 200);
  const disabled = await page('/inbox/access', cookie(shop));
  t.match(disabled.body, /<span class="badge badge-muted">disabled<\/span>/);
  t.match(disabled.body, /<p class="form-error">Disabled: disabled by the user<\/p>/);
  t.match(disabled.body, /data-body='\{"enabled":true\}' data-after="reload">\s*<button type="submit" class="button button-small button-quiet">Enable again<\/button>/);
  t.equal((await call('DELETE', `/api/user/${shop.id}/event-endpoints/${id}`, cookie(shop))).statusCode, 204);
  t.match((await page('/inbox/access', cookie(shop))).body, /No event endpoint yet\./);

  const host = new URL(url).host;
  t.same(auditRows(app).map((r) => [r.action, r.actor, r.target, JSON.parse(r.details)]), [
    ['endpoint.created', shop.id, shop.id, { endpoint_id: id, url_host: host }],
    ['endpoint.changed', shop.id, shop.id, { endpoint_id: id, url_host: host, replay_after: 0 }],
    ['endpoint.changed', shop.id, shop.id, { endpoint_id: id, url_host: host, fields: ['enabled'], enabled: false }],
    ['endpoint.deleted', shop.id, shop.id, { endpoint_id: id, url_host: host }],
  ], 'by id and host: neither the path, the query nor the secret');
  const everything = JSON.stringify(app.db.$client.prepare('SELECT * FROM audit_log').all());
  t.notOk(everything.includes('secret-path-part') || everything.includes(secret) || everything.includes('sig=abc'));
});

t.test('operations: every user\'s endpoints with lag and parked events, and the send queues; a user\'s page lists its queue with Cancel and its rate', async (t) => {
  const { app, admin, shop, other, cookie, page, call } = await setup(t);
  const url = await receiver(t, 200);
  const { id } = (await call('POST', `/api/user/${shop.id}/event-endpoints`, cookie(admin), { url })).json() as { id: number };
  t.same(auditRows(app).map((r) => [r.action, r.actor, r.target]), [['endpoint.created', admin.id, shop.id]], "an ADMIN's change: the ADMIN acted, on the user");
  await app.writer.write(() => {
    inbound(app, shop.id, { from: '351911111111', at: NOW - 120_000 });
    inbound(app, shop.id, { from: '351911111111', at: NOW - 110_000 });
    app.eventEndpointsRepo.park(id, 1, 422, NOW - 60_000);
    app.eventEndpointsRepo.settle(id, { nextAttemptAt: NOW + 60_000, failures: 1 });
  });
  const at = new Date(NOW + 3_600_000).toISOString();
  const queued = await call('POST', '/api/message/send', cookie(shop), { to: '351911111111', type: 'text', text: { body: 'later' }, send_at: at });
  t.equal(queued.statusCode, 202);
  const messageId = queued.json().id as number;

  const ops = await page('/admin/operations', cookie(admin));
  isPage(t, ops, 200, /<h2 id="endpoints-title">Event endpoints<\/h2>/);
  t.match(ops.body, /<td data-label="User"><a href="\/admin\/user\/2">shop@example\.com<\/a><\/td>\s*<td data-label="URL"><code class="wrap">http:\/\/127\.0\.0\.1:\d+\/hooks\/secret-path-part\?sig=abc<\/code><\/td>/);
  t.match(ops.body, /<td data-label="Lag">2 events behind<\/td>/, 'the second inbound and the scheduled send');
  t.match(ops.body, /<td data-label="Parked"><span>#1 \(HTTP 422\) <\/span><\/td>/);
  t.match(ops.body, /<td data-label="User"><a href="\/admin\/user\/2#queue">shop@example\.com<\/a><\/td>\s*<td data-label="Phone number id"><code>106540352242922<\/code> <span class="muted small">80\/s<\/span><\/td>\s*<td data-label="Waiting">1<\/td>/);
  t.match(ops.body, /<td data-label="Paused"><span class="muted">no<\/span><\/td>/);
  isPage(t, await page('/admin/operations', cookie(shop)), 403, /Administrators only/);

  const user = await page(`/admin/user/${shop.id}`, cookie(admin));
  t.match(user.body, /<label for="messaging_rate">Sending rate \(messages per second\)<\/label>\s*<input id="messaging_rate" name="messaging_rate" type="number"[^>]* value="80" required data-kind="int"/);
  t.match(user.body, new RegExp(`<td data-label="Message">#${messageId} <span class="badge">scheduled</span></td>\\s*<td data-label="To"><code>351911111111</code></td>\\s*<td data-label="Due"><time datetime="${at}"`));
  t.match(user.body, new RegExp(`data-method="DELETE" data-url="/api/message/${messageId}" data-body="none" data-after="reload">`));
  t.match((await page(`/admin/user/${other.id}`, cookie(admin))).body, /No queued or scheduled message\./);

  // The rate form's call: the user route takes messaging_rate, checks its range, and the page shows the new value.
  const bad = await call('PUT', `/api/user/update/${shop.id}`, cookie(admin), { messaging_rate: 0 });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'VALIDATION_ERROR');
  t.equal((await call('PUT', `/api/user/update/${shop.id}`, cookie(shop), { messaging_rate: 20 })).statusCode, 403, 'not a CLIENT');
  t.equal((await call('PUT', `/api/user/update/${shop.id}`, cookie(admin), { messaging_rate: 20 })).statusCode, 200);
  t.match((await page(`/admin/user/${shop.id}`, cookie(admin))).body, /name="messaging_rate"[^>]* value="20"/);

  // Cancel from the queue view: an ADMIN cancels the user's message through DELETE /api/message/{id}, refunded to the user.
  t.equal((await call('DELETE', `/api/message/${messageId}`, cookie(other))).statusCode, 404, "another CLIENT: not its message");
  const cancelled = await call('DELETE', `/api/message/${messageId}`, cookie(admin));
  t.equal(cancelled.statusCode, 200);
  t.match(cancelled.json(), { id: messageId, status: 'failed', error: { code: 'CANCELLED' } });
  t.equal(app.creditsRepo.used(shop.id, '2026-11'), 0, 'refunded to its owner');
  const again = await call('DELETE', `/api/message/${messageId}`, cookie(admin));
  t.equal(again.statusCode, 409);
  t.equal(again.json().code, 'MESSAGE_NOT_QUEUED');
  t.match((await page(`/admin/user/${shop.id}`, cookie(admin))).body, /No queued or scheduled message\./);
  t.match((await page('/admin/operations', cookie(admin))).body, /Nothing waiting\./);

  // A CLIENT's own queue on its usage page, with Cancel (its own messages only).
  const mine = (await call('POST', '/api/message/send', cookie(shop), { to: '351922222222', type: 'text', text: { body: 'mine' }, send_at: at })).json().id as number;
  const usage = await page('/inbox/usage', cookie(shop));
  isPage(t, usage, 200, new RegExp(`<td data-label="Message">#${mine} <span class="badge">scheduled</span></td>\\s*<td data-label="To"><code>351922222222</code></td>`));
  t.match(usage.body, new RegExp(`data-method="DELETE" data-url="/api/message/${mine}" data-body="none" data-after="reload">`));
  t.match(usage.body, /<script src="\/admin\/static\/console\.js" defer><\/script>/);
  t.match((await page('/inbox/usage', cookie(other))).body, /No queued or scheduled message\./, "another CLIENT's page shows none of it");
  const notYours = await call('DELETE', `/api/message/${mine}`, cookie(other));
  t.equal(notYours.statusCode, 404);
  t.same(notYours.json(), err(404, 'MESSAGE_NOT_FOUND', 'Not Found', `No outbound message ${mine} of yours`));
  t.equal((await call('DELETE', `/api/message/${mine}`, cookie(shop))).statusCode, 200);
  t.match((await page('/inbox/usage', cookie(shop))).body, /No queued or scheduled message\./);
});
