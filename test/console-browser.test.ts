// The console in a real browser (Debian's chromium through playwright-core), at desktop and phone width: the
// administrator creates a user, sets its token and credits, resets its password, replays a dead callback and finds it
// in the audit log, deletes a user after typing its e-mail; the user signs in and lands on its inbox, opened at the latest message.
// The live thread: an administrator watches messages and ticks arrive from signed callbacks, through a cut connection and
// a swept cursor; the CLIENT replies once after a double click, sends again after a throttled reply, sends a template
// outside the window, and sees the picture it uploaded and sent come back from the archive.
// No console error, no CSP violation, nothing wider than the screen.
// Screenshots go to test-artifacts/, or to docs/ with UPDATE_SCREENSHOTS=1.
import t from 'tap';
import { openPage, overflow, skip, waitUntil, WIDTHS } from './fixtures/browser';
import { bearer, buildTestApp, createAdmin, createUser, PASSWORD } from './helper';
import { inbound, outbound } from './fixtures/conversations';
import { testSandbox, PHONE_ID as SANDBOX_PHONE, TOKEN as SANDBOX_TOKEN } from './fixtures/sending';
import { deliver, deliverOk, envelope, statusItem, textItem } from './fixtures/webhooks';

const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const TOKEN = 'EAAG-browser-token-9XyZ';
const PHONE = '106540352242922';
const SECRET = 'browser-console-secret';



for (const width of WIDTHS) {
  t.test(`${width.name}: an administrator creates a user, sets token and credits, resets its password; the user lands on its inbox`, { skip }, async (t) => {
    const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', messagingAppSecret: SECRET }, { now: () => new Date(NOW) });
    const admin = await createAdmin(app);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const { page, problems, shot } = await openPage(t, width);

    // Log in: an ADMIN lands on the users.
    await page.goto(`${base}/admin`);
    await page.fill('#email', admin.email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${base}/admin`), page.click('button[type="submit"]')]);

    // Create a user; a refused value is explained in place first.
    await page.fill('#new-email', 'shop@example.com');
    await page.fill('#new-password', 'short');
    await page.click('text=Create user');
    await page.locator('#new-user .form-error:not([hidden])').waitFor();
    t.match(await page.textContent('#new-user .form-error'), /password must NOT have fewer than 8 characters/);
    problems.length = 0; // the browser logs the 400 of that attempt
    await page.fill('#new-password', 'first-password-1');
    await page.fill('#new-credits', '50');
    await page.fill('#new-phone', PHONE);
    await Promise.all([page.waitForURL(/\/admin\/user\/\d+$/), page.click('text=Create user')]);
    const userId = Number(new URL(page.url()).pathname.split('/').pop());
    t.equal(await page.textContent('h1'), 'shop@example.com');
    t.match(await page.textContent('#token-state'), /No token is set/);

    // Its token, write-only: afterwards only its last 4 characters show.
    await page.fill('#messaging_token', TOKEN);
    await page.click('text=Set token');
    await page.locator('#token-state', { hasText: '…9XyZ' }).waitFor();
    t.equal(await page.inputValue('#messaging_token'), '', 'the field is empty again');
    t.notMatch(await page.content(), /browser-token/, 'the token is nowhere on the page');

    // Its credits: the form sends only what changed.
    await page.fill('#monthly_credits', '75');
    await page.click('text=Save changes');
    await waitUntil(page, "document.querySelector('#monthly_credits')?.defaultValue === '75'");
    t.match(await page.textContent('#usage .credits-line'), /0 of 75 credits used/);

    // A new password, shown once.
    await page.click('text=Reset password');
    await page.locator('#new-password:not([hidden])').waitFor();
    const password = (await page.textContent('#new-password-value'))!.trim();
    t.match(password, /^[A-Za-z0-9_-]{20}$/);
    await shot('user');
    t.ok(await overflow(page) <= 0, 'the user page fits the window');

    const actions = app.db.$client.prepare('SELECT action FROM audit_log WHERE target_user_id = ? ORDER BY id').pluck().all(userId);
    t.same(actions, ['user.created', 'user.token_replaced', 'user.credits_changed', 'user.password_reset'], 'each change audited');

    // Its conversations fill up, so that the thread has to scroll.
    for (let i = 0; i < 30; i++) {
      const at = NOW - (60 - i) * 60_000;
      if (i % 2 === 0) inbound(app, userId, { from: '351912345678', name: 'Marta Sousa', at, text: `Question number ${i}` });
      else outbound(app, userId, { to: '351912345678', at, text: `Answer number ${i}`, statuses: [['read', at + 5000]] });
    }

    await page.goto(`${base}/admin`);
    t.match(await page.textContent('table.users'), /shop@example\.com[\s\S]*0 \/ 75/);
    await shot('users');
    t.ok(await overflow(page) <= 0, 'the users page fits the window');
    // Operations: a callback for a number nobody has, and a dead one for this user's number, replayed from the page.
    t.equal((await deliver(app, envelope('999000111222', { messages: [textItem('wamid.lost.1', '15551234567', 1795000000, 'anyone?')] }), SECRET)).statusCode, 200);
    const dead = Number(app.db.$client.prepare(`INSERT INTO webhook_events (received_at, raw_body, state, error, attempts, processed_at)
      VALUES (?, ?, 'dead', 'entry[0].changes[0]: the database was locked', 5, ?)`)
      .run(NOW - 600_000, envelope(PHONE, { messages: [textItem('wamid.late.1', '351912345678', 1795000000, 'Did my order ship?')] }), NOW - 300_000).lastInsertRowid);
    await page.goto(`${base}/admin/operations`);
    t.match(await page.textContent('#misrouted-title + p + .table-card'), /999000111222[\s\S]*1 messages, 0 statuses/);
    await shot('operations');
    t.ok(await overflow(page) <= 0, 'the operations page fits the window');
    const row = page.locator('tr', { has: page.locator(`form[data-url="/api/webhook/events/${dead}/replay"]`) });
    await row.locator('button', { hasText: 'Replay' }).click();
    await row.locator('.form-status:not([hidden])').waitFor();
    t.equal(await row.locator('[data-state]').textContent(), 'processed', 'the row shows its new state');
    t.match(await row.locator('.form-status').textContent(), /Replayed: processed after 6 attempts/);
    t.equal(app.db.$client.prepare("SELECT count(*) FROM messages WHERE wamid = 'wamid.late.1'").pluck().get(), 1, 'the message is stored');
    // … and the replay is in the audit log.
    await page.goto(`${base}/admin/audit`);
    t.match(await page.locator('tr', { hasText: 'webhook_event.replayed' }).textContent(), new RegExp(`admin@example\\.com[\\s\\S]*webhook_event_id: ${dead}; state: processed`));
    await shot('audit');
    t.ok(await overflow(page) <= 0, 'the audit page fits the window');

    // Delete another user: the button stays disabled until its e-mail is typed.
    const temp = await createUser(app, { email: 'temp@example.com' });
    inbound(app, temp.id, { from: '351900000000', at: NOW - 1000 });
    await page.goto(`${base}/admin/user/${temp.id}`);
    t.match(await page.textContent('.danger-zone'), /its 1 conversations,\s+1 messages/);
    const remove = page.locator('.danger-zone button[type="submit"]');
    await page.fill('#confirm-email', 'temp@example.co');
    t.ok(await remove.isDisabled(), 'not yet');
    await page.fill('#confirm-email', 'TEMP@example.com');
    t.ok(await remove.isEnabled(), 'the e-mail typed (in any case)');
    await Promise.all([page.waitForURL(`${base}/admin`), remove.click()]);
    t.notOk(app.usersRepo.findById(temp.id), 'deleted');
    t.equal(app.db.$client.prepare("SELECT count(*) FROM audit_log WHERE action = 'user.deleted' AND target_user_id = ?").pluck().get(temp.id), 1);

    // Log out; the user signs in with the new password and lands on its inbox.
    await Promise.all([page.waitForURL(`${base}/admin/login`), page.click('#logout')]);
    await page.fill('#email', 'shop@example.com');
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(`${base}/inbox`), page.click('button[type="submit"]')]);
    t.match(await page.textContent('.crumbs'), /0 of 75 credits used this month, 75 left/);
    t.equal(await page.textContent('.thread-head h2'), 'Marta Sousa');
    // Opened at the latest message: the last bubble is in view (inside its pane, or on a phone in the window).
    const lastInView = await page.evaluate(`(() => {
      const bubbles = document.querySelectorAll('.messages .bubble');
      const box = bubbles[bubbles.length - 1].getBoundingClientRect();
      const pane = document.querySelector('.messages').getBoundingClientRect();
      return box.bottom <= Math.min(window.innerHeight, pane.bottom) + 1 && box.top >= 0;
    })()`);
    t.ok(lastInView, 'the thread opens at its latest message');
    t.match(await page.locator('.messages .bubble').last().textContent(), /Answer number 29/);
    await shot('inbox');
    t.ok(await overflow(page) <= 0, 'the inbox fits the window');

    // The administrators' pages stay closed to it, with the way back to its inbox.
    await page.goto(`${base}/admin`);
    t.equal(await page.textContent('h1'), 'Administrators only');
    await Promise.all([page.waitForURL(`${base}/inbox`), page.click('text=Go to your inbox')]);
    await page.click('a[href="/inbox/usage"]');
    await page.waitForURL(`${base}/inbox/usage`);
    t.match(await page.textContent('.credits-line'), /0 of 75 credits used/);
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 403/.test(p))); // the 403 page itself
    t.same(problems, [], 'no console errors, CSP violations or dialogs');
  });
}

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
/** Signed callbacks for the shop's number, as the network posts them. */
const customer = '15551234567';
const seconds = (ms: number) => String(Math.floor(ms / 1000));

for (const width of WIDTHS) {
  t.test(`${width.name}: an administrator watches a thread update live while callbacks arrive; a lost connection resumes and says so`, { skip }, async (t) => {
    const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', messagingAppSecret: SECRET }, { now: () => new Date(NOW) });
    const admin = await createAdmin(app);
    const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: PHONE, messagingToken: TOKEN, monthlyCredits: 100 });
    await deliverOk(app, envelope(PHONE, { messages: [textItem('wamid.in.1', customer, Number(seconds(NOW - 600_000)), 'Hello, is my order ready?')] }), SECRET);
    const sent = outbound(app, shop.id, { to: customer, at: NOW - 300_000, text: 'Yes, it ships today.' });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const { page, problems, shot } = await openPage(t, width, (context) =>
      context.addCookies([{ name: 'token', value: app.issueToken(admin), url: base, httpOnly: true, sameSite: 'Lax' }]));
    const streams = () => page.waitForResponse((r) => r.url().includes(`/api/user/${shop.id}/events/stream`) && r.status() === 200);

    const streaming = streams();
    await page.goto(`${base}/admin/user/${shop.id}/conversation-thread`);
    await streaming;
    t.equal(await page.locator('.messages .bubble').count(), 2);
    t.equal(await page.getAttribute(`#m${sent.id} .tick`, 'aria-label'), 'Accepted by the network');
    await page.evaluate('window.notReloaded = true');

    // A new message and a read tick arrive as signed callbacks: both show without a reload.
    await deliverOk(app, envelope(PHONE, { messages: [textItem('wamid.in.2', customer, Number(seconds(NOW - 60_000)), 'Great, thank you!')] }), SECRET);
    await page.locator('.messages .bubble', { hasText: 'Great, thank you!' }).waitFor();
    await deliverOk(app, envelope(PHONE, { statuses: [statusItem(sent.wamid!, 'read', Number(seconds(NOW - 30_000)))] }), SECRET);
    await page.locator(`#m${sent.id} .tick-read`).waitFor();
    t.equal(await page.getAttribute(`#m${sent.id} .tick`, 'aria-label'), 'Read');
    t.equal(await page.locator('.messages .bubble').last().textContent().then((s) => s?.includes('Great, thank you!')), true, 'the new message is the last bubble');
    t.equal(await page.evaluate('window.notReloaded'), true, 'the page was not reloaded');
    await shot('live-thread');

    // The connection drops (every socket of the server closed) and stays down while a message arrives: once it is
    // back, the page resumes after its last event, says so, and shows what arrived meanwhile.
    const streamUrl = `**/api/user/${shop.id}/events/stream`;
    const cut = async () => {
      await page.route(streamUrl, (route) => route.abort());
      app.server.closeAllConnections();
      await page.locator('#live-status', { hasText: 'Connection lost' }).waitFor();
    };
    await cut();
    await deliverOk(app, envelope(PHONE, { messages: [textItem('wamid.in.3', customer, Number(seconds(NOW - 20_000)), 'Sent while you were away')] }), SECRET);
    const resumed = streams();
    await page.unroute(streamUrl);
    const again = await resumed;
    t.match(again.request().headers()['last-event-id'], /^[0-9]+$/, 'resumed by Last-Event-ID');
    await page.locator('#live-status', { hasText: 'Reconnected' }).waitFor();
    await page.locator('.messages .bubble', { hasText: 'Sent while you were away' }).waitFor();
    t.equal(await page.locator('.messages .bubble', { hasText: 'Sent while you were away' }).count(), 1, 'shown once');
    t.equal(await page.evaluate('window.notReloaded'), true, 'still no reload');
    t.ok(await overflow(page) <= 0, 'the live thread fits the window');

    // Down again, and meanwhile retention swept the events the page missed: on reconnecting it reloads and says why.
    await cut();
    await deliverOk(app, envelope(PHONE, { messages: [textItem('wamid.in.4', customer, Number(seconds(NOW - 10_000)), 'One more')] }), SECRET);
    app.db.$client.prepare('DELETE FROM events WHERE user_id = ?').run(shop.id);
    const reloaded = page.waitForEvent('load');
    await page.unroute(streamUrl);
    await reloaded;
    await page.locator('#live-status', { hasText: 'reloaded' }).waitFor();
    t.equal(await page.evaluate('window.notReloaded'), undefined, 'reloaded');
    t.equal(await page.locator('.messages .bubble').count(), 5);

    // Only the connection cut off on purpose may show in the console.
    t.same(problems.filter((p) => !/ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_FAILED|status of 410/.test(p)), [], 'no console errors or CSP violations');
  });
}

for (const width of WIDTHS) {
  t.test(`${width.name}: the CLIENT signs in and replies once after a double click; a throttled reply is sent again as a new send`, { skip }, async (t) => {
    const sandbox = await testSandbox(t);
    const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon', messagingAppSecret: SECRET, messagingApiUrl: `${sandbox.url}/v23.0` },
      { now: () => new Date(NOW) });
    const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: SANDBOX_PHONE, messagingToken: SANDBOX_TOKEN, monthlyCredits: 100 });
    await deliverOk(app, envelope(SANDBOX_PHONE, { messages: [textItem('wamid.in.1', customer, Number(seconds(NOW - 600_000)), 'Do you deliver on Sundays?')] }), SECRET);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const { page, problems, shot } = await openPage(t, width);
    const sends: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url() === `${base}/api/message/send`) sends.push(request.headers()['idempotency-key'] ?? '');
    });
    const outboundTexts = () => app.db.$client.prepare("SELECT text FROM messages WHERE user_id = ? AND direction = 'outbound' ORDER BY id").pluck().all(shop.id);

    await page.goto(`${base}/inbox`);
    await page.fill('#email', 'shop@example.com');
    await page.fill('#password', PASSWORD);
    const streaming = page.waitForResponse((r) => r.url().includes(`/api/user/${shop.id}/events/stream`) && r.status() === 200);
    await Promise.all([page.waitForURL(`${base}/inbox`), page.click('button[type="submit"]')]);
    await streaming;
    t.match(await page.textContent('#reply-window'), /^Free text: the service window is open, 23 h [0-9]{2} min left$/, 'counted down from the server\'s time left');
    t.equal(await page.textContent('#reply-cost'), 'Costs 1 credit · 100 credits left this month');
    t.ok(await page.isHidden('.reply-template'), 'no template fields while the window is open');

    // A double click sends once: one call of the API, one message stored, one network request.
    await page.fill('#reply-body', 'Yes, from 9 to 13.');
    await page.dblclick('#reply-send');
    await page.locator('#reply-status', { hasText: 'Sent.' }).waitFor();
    await page.locator('.messages .bubble-out', { hasText: 'Yes, from 9 to 13.' }).waitFor();
    t.equal(sends.length, 1, 'one call of POST /api/message/send');
    t.match(sends[0], /^console-[0-9a-f]{32}$/, 'under an Idempotency-Key');
    t.same(outboundTexts(), ['Yes, from 9 to 13.'], 'one message stored');
    t.equal(sandbox.requests.length, 1, 'one network request');
    t.equal(await page.textContent('#reply-cost'), 'Costs 1 credit · 99 credits left this month');
    t.equal(await page.inputValue('#reply-body'), '', 'the box is empty again');
    await shot('reply');

    // The network throttles the next reply: the API's message in place, and "Send again" is a new send under a new key.
    sandbox.enqueue({ kind: 'fail', error: 'pair_rate_limit' });
    await page.fill('#reply-body', 'And on holidays too.');
    await page.click('#reply-send');
    await page.locator('#reply-error:not([hidden])').waitFor();
    t.match(await page.textContent('#reply-error'), /131056|rate|limit/i);
    t.ok(await page.isVisible('#reply-again'), 'Send again is offered');
    t.equal(await page.textContent('#reply-cost'), 'Costs 1 credit · 99 credits left this month', 'the credit was refunded');
    await page.click('#reply-again');
    await page.locator('#reply-status', { hasText: 'Sent.' }).waitFor();
    await page.locator('.messages .bubble-out:not(.bubble-failed)', { hasText: 'And on holidays too.' }).waitFor();
    t.equal(sends.length, 3);
    t.not(sends[2], sends[1], 'a new key for the new send');
    t.equal(sandbox.requests.length, 3, 'the network was called again');
    t.same(outboundTexts(), ['Yes, from 9 to 13.', 'And on holidays too.', 'And on holidays too.'], 'the refused one stays, failed, beside the new one');
    t.ok(await page.isHidden('#reply-again'));

    // A picture uploaded through POST /api/media and sent by its id: the archive keeps a copy, and the open thread
    // shows it once stored (the bubble's image is the archived file, served by the gateway).
    const boundary = '----console-boundary-1';
    const upload = await app.inject({
      method: 'POST', url: '/api/media', headers: { ...bearer(app, shop), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="parcel.png"\r\nContent-Type: image/png\r\n\r\n`),
        PNG, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    });
    t.equal(upload.statusCode, 201);
    const sentImage = await app.inject({ method: 'POST', url: '/api/message/send', headers: bearer(app, shop),
      payload: { to: customer, type: 'image', image: { id: upload.json().id, caption: 'Your parcel' } } });
    t.equal(sentImage.statusCode, 201);
    const image = page.locator(`#m${sentImage.json().id} img.media-image`);
    await image.waitFor();
    t.equal(await image.getAttribute('src'), `/api/media/${sentImage.json().id}`);
    await waitUntil(page, `document.querySelector('#m${sentImage.json().id} img.media-image')?.naturalWidth === 1`);
    const archived = await app.inject({ method: 'GET', url: `/api/media/${sentImage.json().id}`, headers: bearer(app, shop) });
    t.same([archived.statusCode, archived.headers['content-type'], archived.rawPayload.equals(PNG)], [200, 'image/png', true], 'the archived copy is the uploaded file');
    t.ok(await overflow(page) <= 0, 'the inbox with its reply box fits the window');

    // A customer whose window closed two days ago: the box offers a template instead, and sends the network's object.
    await deliverOk(app, envelope(SANDBOX_PHONE, { messages: [textItem('wamid.in.old', '15557654321', Number(seconds(NOW - 2 * 86_400_000)), 'Hi, last week')] }), SECRET);
    await page.goto(`${base}/inbox?contact=15557654321`);
    t.equal(await page.textContent('#reply-window'), 'The service window is closed: send an approved template');
    t.ok(await page.isHidden('.reply-text'), 'no free text outside the window');
    await page.fill('#reply-template-name', 'order_update');
    await page.fill('#reply-template-params', 'Ana\n42');
    await page.click('#reply-send');
    await page.locator('.messages .bubble-out .template-name', { hasText: 'order_update' }).waitFor();
    t.same(JSON.parse(sandbox.requests.at(-1)!.body).template, { name: 'order_update', language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: '42' }] }] });
    t.same(problems.filter((p) => !/status of 429/.test(p)), [], 'no console errors or CSP violations (the 429 is the throttled reply)');
  });
}
