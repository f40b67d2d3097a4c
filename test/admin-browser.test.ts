// A real browser against the real app on a loopback port: log in through /admin/login, open a thread,
// see bubbles and ticks, and keep screenshots in test-artifacts/ (docs/ only with UPDATE_SCREENSHOTS=1).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chromium, type Browser } from 'playwright-core';
import { projectRoot } from '../src/config';
import { buildTestApp, createAdmin, createUser, PASSWORD } from './helper';
import { HOSTILE_TEXT, seedDemoInbox } from './fixtures/conversations';
import { png } from './fixtures/png';
import { PHONE_ID, sendingApp } from './fixtures/sending';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const ARTIFACTS = join(projectRoot, 'test-artifacts');
/** UPDATE_SCREENSHOTS=1 also writes the README's screenshots in docs/ (tracked: commit them on purpose). */
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

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

/** A sky-to-sea picture with a sun, so the screenshot shows a real image. */
const sunset = (width: number, height: number) => png(width, height, (x, y) => {
  const horizon = height * 0.62;
  const sun = Math.hypot(x - width * 0.68, y - horizon * 0.78) < height * 0.14;
  if (sun) return [253, 224, 71];
  const k = y / horizon;
  return y < horizon ? [Math.round(251 - 120 * k), Math.round(146 - 60 * k), Math.round(60 + 120 * k)]
    : [14, Math.round(116 - 40 * ((y - horizon) / (height - horizon))), Math.round(144 + ((x * 7 + y * 3) % 23))];
});

t.test('an inbound image is archived and shown in the thread; chips fit a phone; screenshot for the README', { skip }, async (t) => {
  const secret = 'browser-media-secret';
  const ctx = await sendingApp(t, { config: { messagingAppSecret: secret } });
  const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  ctx.sandbox.configureCallbacks({ webhookUrl: `${base}/api/messaging/webhook`, appSecret: secret, enabled: true, delayMs: 0 });
  const from = '351912345678';
  const say = (text: string) => ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from, name: 'Marta Sousa', text });
  await say('Bom dia! The new shop window is up, have a look');
  const image = await ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from, name: 'Marta Sousa',
    media: { type: 'image', data: sunset(480, 300).toString('base64'), mime_type: 'image/png', caption: 'Vitrine, Rua Augusta' } });
  await ctx.sandbox.injectInbound({ phoneNumberId: PHONE_ID, from, name: 'Marta Sousa',
    media: { type: 'document', data: Buffer.from('%PDF-1.4 invoice').toString('base64'), mime_type: 'application/pdf', filename: 'fatura-0042.pdf' } });
  await ctx.post('/api/message/send', { to: from, type: 'text', text: { body: 'Looks great, thanks Marta!' } });
  const imageId = ctx.app.db.$client.prepare('SELECT id FROM messages WHERE wamid = ?').pluck().get(image.wamid) as number;
  const state = () => ctx.app.db.$client.prepare("SELECT count(*) FROM media_downloads WHERE state = 'stored'").pluck().get();
  for (let i = 0; i < 400 && state() !== 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(state(), 2, 'both files archived');

  const admin = await createAdmin(ctx.app);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await context.addCookies([{ name: 'token', value: ctx.app.issueToken(admin), url: base }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${base}/admin/user/${ctx.user.id}/conversation-thread`);
  const img = page.locator(`img[src="/api/media/${imageId}"]`);
  await img.waitFor();
  await img.evaluate((el) => (el as unknown as { decode(): Promise<void> }).decode());
  t.equal(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), 480, 'the image is displayed (decoded from the archive)');
  t.equal(await page.locator('a.media-download', { hasText: 'Download document' }).count(), 1);
  // The README's picture (tracked in docs/) is rewritten only when asked; every run keeps its own copy in test-artifacts/.
  mkdirSync(ARTIFACTS, { recursive: true });
  const screenshot = await page.screenshot({ path: join(ARTIFACTS, 'thread-media.png'), fullPage: false });
  if (UPDATE_SCREENSHOTS) writeFileSync(join(projectRoot, 'docs', 'thread-media.png'), screenshot);

  // A phone: every filter chip is whole (they wrap instead of being cut off).
  await page.setViewportSize({ width: 390, height: 844 });
  const clipped = await page.locator('.chip').evaluateAll((chips) => chips.filter((chip) => {
    const box = chip.getBoundingClientRect();
    const row = chip.parentElement!.getBoundingClientRect();
    return box.right > row.right + 0.5 || chip.scrollWidth > chip.clientWidth;
  }).map((chip) => chip.textContent));
  t.same(clipped, [], 'no chip clipped');
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'thread-media-phone.png'), fullPage: true });
  t.same(problems, [], 'no console errors or CSP violations');
});
