// A real browser against the real app on a loopback port: log in through /admin/login, open a thread,
// see bubbles and ticks, and keep a screenshot in test-artifacts/.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromium, type Browser } from 'playwright-core';
import { projectRoot } from '../src/config';
import { buildTestApp, createAdmin, createUser, PASSWORD } from './helper';
import { HOSTILE_TEXT, seedDemoInbox } from './fixtures/conversations';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const ARTIFACTS = join(projectRoot, 'test-artifacts');

// Afternoon in Lisbon: every seeded hour falls on a known day.
const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const skip = existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) to run it`;

t.test('an administrator logs in, opens a thread and sees bubbles, ticks and escaped text', { skip }, async (t) => {
  const { app } = await buildTestApp(t, { timezone: 'Europe/Lisbon' }, { now: () => new Date(NOW) });
  // The start-up pass first: the demo inbox holds a pending send older than the send budget.
  await app.ready();
  await app.settleInterrupted.run();
  const admin = await createAdmin(app);
  const shop = await createUser(app, { email: 'shop@example.com', messagingPhoneNumberId: '106540352242922', messagingToken: 'tok' });
  seedDemoInbox(app, shop.id, NOW);
  const base = await app.listen({ host: '127.0.0.1', port: 0 });

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1200, height: 860 } });
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('dialog', (dialog) => { problems.push(`a dialog opened: ${dialog.message()}`); void dialog.dismiss(); });

  const thread = `/admin/user/${shop.id}/conversation-thread`;
  await page.goto(base + thread);
  t.equal(new URL(page.url()).pathname, '/admin/login', 'sent to the login page');
  await page.fill('#email', admin.email);
  await page.fill('#password', 'wrong password');
  await page.click('button[type="submit"]');
  await page.waitForSelector('#login-error:not([hidden])');
  t.match(await page.textContent('#login-error'), /wrong/i, 'a wrong password is explained');
  problems.length = 0; // the browser logs the 401 of that attempt
  await page.fill('#password', PASSWORD);
  await Promise.all([page.waitForURL(`**${thread}`), page.click('button[type="submit"]')]);
  t.equal(new URL(page.url()).pathname, thread, 'back at the page asked for');

  t.equal(await page.locator('.contact').count(), 4, 'four contacts');
  t.equal(await page.textContent('.thread-head h2'), 'Ana Lima', 'the newest conversation is open');
  t.ok(await page.locator('.bubble-in').count() >= 5, 'inbound bubbles');
  t.ok(await page.locator('.bubble-out').count() >= 4, 'outbound bubbles');
  const side = async (selector: string) => page.locator(selector).first().evaluate((el) => {
    const box = el.getBoundingClientRect();
    const parent = el.parentElement!.getBoundingClientRect();
    return box.left - parent.left < parent.right - box.right ? 'left' : 'right';
  });
  t.equal(await side('.bubble-in'), 'left');
  t.equal(await side('.bubble-out'), 'right');
  t.same(await page.locator('.tick').evaluateAll((els) => els.map((el) => el.className.replace('tick tick-', ''))),
    ['read', 'delivered', 'sent', 'failed', 'pending']);
  t.match(await page.textContent('.bubble-failed .failure'), /Re-engagement message — More than 24 hours .* \(131047\)/);
  t.match(await page.textContent('.template'), /order_shipped.*en_US.*Ana.*#4521.*Tuesday/s);
  t.match(await page.textContent('.attachment-document'), /Document.*receipt-4521\.pdf/s);
  t.ok((await page.locator('.bubble .text', { hasText: '<script>alert("x")</script>' }).count()) === 1, 'hostile text shown as text');
  t.equal(await page.locator('.bubble img, .bubble script').count(), 0, 'and not as markup');
  t.ok(HOSTILE_TEXT.includes('onerror'));

  await page.click('.chip >> text=Today');
  t.match(new URL(page.url()).search, /filter=today/);
  await page.click('.contact >> text=Ben Okafor');
  t.equal(await page.textContent('.thread-head h2'), 'Ben Okafor');
  await page.goto(base + thread);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'thread.png'), fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(ARTIFACTS, 'thread-phone.png'), fullPage: true });
  await page.goto(base + '/admin');
  await page.screenshot({ path: join(ARTIFACTS, 'users-phone.png'), fullPage: true });
  t.same(problems, [], 'no console errors, CSP violations or dialogs');
});
