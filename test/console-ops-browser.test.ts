// The API access page and the operator's views in a real browser (Debian's chromium through playwright-core), at
// desktop and phone width: a CLIENT creates an API key (shown once, then only its last 4) and revokes it, adds an event
// endpoint (its secret shown once) and pings it; an administrator sees that endpoint on the operations page, sets the
// user's sending rate, cancels its scheduled message from the user's page, and finds the key and endpoint changes in
// the audit log. No console error, no CSP violation, nothing wider than the screen.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { openPage, overflow, skip, waitUntil, WIDTHS } from './fixtures/browser';
import { buildTestApp, createAdmin, createUser, PASSWORD } from './helper';

const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const PHONE = '106540352242922';



for (const width of WIDTHS) {
  t.test(`${width.name}: a CLIENT manages its keys and endpoints; an administrator sees them in operations, cancels a queued send and finds the changes audited`, { skip }, async (t) => {
    const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', eventEndpointsAllowHttp: true, eventEndpointsAllowedCidrs: ['127.0.0.0/8'] },
      { now: () => new Date(NOW) });
    const admin = await createAdmin(app);
    const shop = await createUser(app, { email: 'shop@example.com', password: PASSWORD, messagingPhoneNumberId: PHONE, messagingToken: 'EAAG-ops-browser-token', monthlyCredits: 10 });
    const receiver = createServer((request, response) => { request.resume(); request.on('end', () => response.writeHead(204).end()); });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    t.teardown(() => new Promise<void>((resolve) => { receiver.close(() => resolve()); }));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const { page, problems, shot } = await openPage(t, width);
    const logIn = async (email: string, landing: string) => {
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${base}${landing}`), page.click('button[type="submit"]')]);
    };

    // The CLIENT: from its inbox to API access.
    await page.goto(`${base}/inbox`);
    await logIn(shop.email, '/inbox');
    await Promise.all([page.waitForURL(`${base}/inbox/access`), page.click('a[href="/inbox/access"]')]);

    // A key: an empty name is the API's 400, in place; then the key, shown once.
    await page.click('text=Create key');
    await page.locator('#keys-title ~ form .form-error:not([hidden])').waitFor();
    t.match(await page.textContent('#keys-title ~ form .form-error'), /name must NOT have fewer than 1 characters/);
    problems.length = 0; // the browser logs the 400 of that attempt
    await page.fill('#key-name', 'support bot');
    await page.click('text=Create key');
    await page.locator('#new-key:not([hidden])').waitFor();
    const key = (await page.textContent('#new-key code'))!.trim();
    t.match(key, /^gwk_[A-Za-z0-9_-]{43}$/);
    t.equal(await page.evaluate('document.activeElement.id'), 'new-key', 'focus moves to the key');
    await shot('access-key');
    await Promise.all([page.waitForURL(`${base}/inbox/access`), page.click('text=Done: show it in the list')]);
    t.match(await page.textContent('#keys-title ~ .table-card'), new RegExp(`support bot[\\s\\S]*…${key.slice(-4)}`));
    t.notOk((await page.content()).includes(key), 'the key is not on the page any more');

    // An endpoint: its secret shown once; a test ping reaches the receiver.
    await page.fill('#endpoint-url', hook);
    await page.fill('#endpoint-description', 'crm');
    await page.click('text=Add endpoint');
    await page.locator('#new-secret:not([hidden])').waitFor();
    const secret = (await page.textContent('#new-secret code'))!.trim();
    t.match(secret, /^whsec_/);
    await Promise.all([page.waitForURL(`${base}/inbox/access`), page.click('text=Done: show the endpoint')]);
    t.notOk((await page.content()).includes(secret), 'the secret is not on the page any more');
    const endpoint = page.locator('article.endpoint');
    t.match(await endpoint.textContent(), /delivering\s+up to date · crm/);
    await endpoint.locator('button', { hasText: 'Send a test ping' }).click();
    await endpoint.locator('.form-status:not([hidden])').waitFor();
    t.match(await endpoint.locator('.form-status').textContent(), /^Delivered: HTTP 204, \d+ ms$/);
    await shot('access');
    t.ok(await overflow(page) <= 0, 'the access page fits the window');

    // Revoke the key.
    await Promise.all([page.waitForEvent('load'), page.click('button[aria-label="Revoke the key support bot"]')]);
    await page.locator('text=No API key yet.').waitFor();

    // A scheduled send of the user's, through the API, for the administrator to cancel.
    const scheduled = await page.evaluate(`fetch('/api/message/send', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: '351912345678', type: 'text', text: { body: 'tomorrow' }, send_at: '2026-11-22T10:00:00.000Z' }) })
      .then((r) => r.json())`) as { id: number; status: string };
    t.equal(scheduled.status, 'scheduled');
    await Promise.all([page.waitForURL(`${base}/admin/login`), page.click('#logout')]);

    // The administrator: operations shows the endpoint and the queue.
    await page.goto(`${base}/admin/operations`);
    await logIn(admin.email, '/admin/operations');
    t.match(await page.textContent('#endpoints-title ~ .table-card'), new RegExp(`shop@example\\.com[\\s\\S]*${hook.replaceAll('.', '\\.')}[\\s\\S]*delivering[\\s\\S]*up to date`));
    t.match(await page.textContent('#queues-title ~ .table-card'), /shop@example\.com[\s\S]*106540352242922[\s\S]*80\/s[\s\S]*1/);
    await shot('operations-queues');
    t.ok(await overflow(page) <= 0, 'the operations page fits the window');

    // The user's page: its rate, then Cancel on the scheduled message (refunded).
    await Promise.all([page.waitForURL(`${base}/admin/user/${shop.id}#queue`), page.click(`#queues-title ~ .table-card a[href="/admin/user/${shop.id}#queue"]`)]);
    await page.fill('#messaging_rate', '20');
    await page.click('text=Save changes');
    await waitUntil(page, "document.querySelector('#messaging_rate')?.defaultValue === '20'");
    t.equal(app.usersRepo.findById(shop.id)!.messagingRate, 20);
    t.equal(app.creditsRepo.used(shop.id, '2026-11'), 1, 'the scheduled message holds a credit');
    await Promise.all([page.waitForEvent('load'), page.click(`button[aria-label="Cancel message ${scheduled.id}"]`)]);
    await page.locator('text=No queued or scheduled message.').waitFor();
    t.equal(app.creditsRepo.used(shop.id, '2026-11'), 0, 'refunded');
    t.ok(await overflow(page) <= 0, 'the user page fits the window');

    // The audit log: the key's and the endpoint's changes, by the CLIENT, never a secret.
    await page.goto(`${base}/admin/audit`);
    const log = (await page.textContent('main'))!;
    for (const action of ['key.created', 'key.revoked', 'endpoint.created']) t.match(log, new RegExp(`${action.replace('.', '\\.')}`), action);
    t.match(await page.locator('tr', { hasText: 'endpoint.created' }).textContent(), /shop@example\.com[\s\S]*url_host: 127\.0\.0\.1:\d+/);
    t.notOk(log.includes(key) || log.includes(secret), 'neither the key nor the secret');
    t.ok(await overflow(page) <= 0, 'the audit page fits the window');
    t.same(problems, [], 'no console errors, CSP violations or dialogs');
  });
}
