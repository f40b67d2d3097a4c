// The README's runnable shell examples, in order, as one bash script against the real gateway process and the sandbox.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/config';
import { startSandbox } from '../src/sandbox/server';
import { freePort, run, SERVER_TS, waitForHealth } from './fixtures/process';

// What the README's examples assume of the gateway they talk to (see its "Trying the examples").
const README_BASE = 'http://127.0.0.1:3000';
const PASSWORD_PLACEHOLDER = 'paste the password from the log';
const ACCOUNT = { phoneNumberId: '106540352242922', token: 'EAAG-your-token' };
const APP_SECRET = 'my-app-secret';
const VERIFY_TOKEN = 'my-verify-token';
const ADMIN_PASSWORD = 'readme-admin-password';

const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');

/** The bodies of the fenced `sh` blocks marked `<!-- runnable -->` on the line before, in README order. */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^<!-- runnable -->\n```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

async function bash(script: string, cwd: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const [code] = await once(child, 'exit') as [number | null];
  return { code, output };
}

t.test('every runnable block is a marked sh block, and the marker is not misspelt', async (t) => {
  const blocks = runnableBlocks(readme);
  t.ok(blocks.length >= 8, `found ${blocks.length} runnable blocks`);
  t.equal(readme.match(/^<!-- runnable -->$/gm)?.length, blocks.length, 'each marker is followed by a ```sh block');
  t.same(blocks.filter((block) => /^```/m.test(block)), [], 'no block runs on into the next one (a missing closing fence)');
  t.ok(blocks[0]!.includes(`ADMIN_PASSWORD='${PASSWORD_PLACEHOLDER}'`), 'the first block sets the password placeholder');
});

t.test('user-facing text cites no document users do not have', async (t) => {
  t.notMatch(readme, /SPEC|§/);
});

t.test("the README's runnable examples run top to bottom against a started gateway", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'readme-examples-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  const sandbox = await startSandbox({
    host: '127.0.0.1', port: 0, webhookUrl: `${base}/api/messaging/webhook`, appSecret: APP_SECRET, delayMs: 20, enabled: true,
  });
  t.teardown(() => sandbox.close());
  sandbox.addAccount(ACCOUNT);

  const gateway = run(t, SERVER_TS, {
    HOST: '127.0.0.1', PORT: String(port), DATABASE_PATH: join(dir, 'gateway.db'), LOG_LEVEL: 'warn',
    ADMIN_EMAIL: 'admin@localhost', ADMIN_PASSWORD,
    MESSAGING_API_URL: `${sandbox.url}/v23.0`, MESSAGING_APP_SECRET: APP_SECRET, MESSAGING_VERIFY_TOKEN: VERIFY_TOKEN,
  });
  if (!await waitForHealth(base, gateway.exited, Date.now() + 60_000)) {
    t.comment(gateway.output());
    return t.fail('the gateway did not start');
  }

  // curl fails on HTTP errors here (so a broken example fails the test); the README stays uncluttered.
  const blocks = runnableBlocks(readme);
  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body "$@"; }',
    ...blocks.map((block, i) => `printf '\\n--- README block ${i + 1} ---\\n'\n${block}`),
  ].join('\n').replaceAll(README_BASE, base).replaceAll(PASSWORD_PLACEHOLDER, ADMIN_PASSWORD);
  mkdirSync(work);
  const { code, output } = await bash(script, work);

  const ok = t.equal(code, 0, 'the script exits 0');
  // Answers the README's `# {…}` comments promise, in the steps that matter.
  for (const promised of [
    '{"message":"Login success"}',
    '"role":"ADMIN"',
    '"code":"UNAUTHORIZED"',
    '"email":"ana@example.com"',
    '"messaging_token_set":true,"messaging_token_last4":"oken"',
    '"type":"text","status":"accepted"',
    '"type":"template","status":"accepted"',
    '"type":"image","status":"accepted"',
    'body/image must have exactly one of id or link',
    '"mime_type":"text/plain","file_size":39}',
    '"type":"document","status":"accepted"',
    '"code":"UNSUPPORTED_MEDIA_TYPE"',
    '{"message":"Logged out of every session"}',
    '1158201444',
    '{"status":"received"}',
    '"text":"Thanks, it arrived!"',
    '"text":"Your order has shipped"',
    'content-disposition: attachment; filename="order-42.txt"',
    "content-security-policy: sandbox; default-src 'none'",
    'Order 42: 2 parcels, signed for by Ana',
    'gateway_sends_total{outcome="accepted"} 14',
  ]) t.ok(output.includes(promised), `the output shows ${promised}`);
  t.notOk(output.includes('EAAG-your-token'), 'the messaging token is never answered');
  if (!ok || t.counts.fail > 0) {
    t.comment(output.replaceAll('\r', ''));
    t.comment(gateway.output());
  }

  // The OpenAPI descriptions, as served, explain in place too.
  const docs = await (await fetch(`${base}/docs/json`)).text();
  t.notMatch(docs, /SPEC|§/, 'the OpenAPI document cites no SPEC section');
});
