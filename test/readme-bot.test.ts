// The README's "Build a bot" script, as printed there, run with node against the gateway and the sandbox: it follows
// the stream with an API key and answers an inbound text through the send endpoint.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/config';
import { sendingApp } from './fixtures/sending';
import { tempDir } from './helper';
import { deliver, envelope, textItem } from './fixtures/webhooks';

const SECRET = 'bot-secret';

t.test('the Build a bot script answers an inbound text', async (t) => {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const script = /```js\n(\/\/ bot\.mjs:[\s\S]*?)^```$/m.exec(readme)?.[1];
  if (!t.ok(script, 'the script is in the README')) return;
  const dir = tempDir(t);
  writeFileSync(join(dir, 'bot.mjs'), script!);

  const { app, sandbox, user, auth } = await sendingApp(t, { config: { messagingAppSecret: SECRET } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const key = (await app.inject({ method: 'POST', url: `/api/user/${user.id}/keys`, headers: auth, payload: { name: 'echo bot' } })).json().key as string;

  const bot = spawn('node', [join(dir, 'bot.mjs')], {
    env: { ...process.env, GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_KEY: key, USER_ID: String(user.id), AFTER: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  bot.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  bot.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  t.teardown(() => { bot.kill('SIGKILL'); });

  const raw = envelope('106540352242922', {
    contacts: [{ wa_id: '15551230009', profile: { name: 'Zoe' } }], messages: [textItem('wamid.bot1', '15551230009', 1_790_000_000, 'hello bot')],
  });
  t.equal((await deliver(app, raw, SECRET)).statusCode, 200);
  const sends = () => sandbox.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages'));
  const deadline = Date.now() + 30_000;
  while (sends().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.match(JSON.parse(sends()[0]?.body ?? 'null'), { to: '15551230009', type: 'text', text: { body: 'You said: hello bot' } }, output);
  while (!/^1 201 /m.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.match(output, /^1 201 /m, 'the bot logged the 201 of its reply');
});
