// `npm run demo`: the gateway and the sandbox network on loopback with a ready demo user; prints curl lines to try.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import { buildApp } from '../app';
import { ConfigError, loadConfig, projectRoot, type Config } from '../config';
import { CONTROL_TOKEN_HEADER } from './control';
import { startSandbox } from './server';
import { ensureAdmin } from '../services/bootstrap-admin';
import { hashPassword } from '../services/passwords';

const DEMO = { email: 'demo@localhost', messagingPhoneNumberId: '100000000000001', monthlyCredits: 100 };
// The account the README's examples give their user, so they send through the demo's sandbox as written.
const README_ACCOUNT = { phoneNumberId: '106540352242922', token: 'EAAG-your-token' };
const CALLBACK_DELAY_MS = 500;
const random = (bytes: number) => randomBytes(bytes).toString('base64url');

function loadBaseConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
}

/** Null when `host:port` can be listened on now; else why not (e.g. another demo runs there). */
function portProblem(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : error.message));
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
}

async function main(): Promise<void> {
  const base = loadBaseConfig();
  // Before anything is touched: a second demo must not delete the running demo's database.
  const problem = base.port === 0 ? null : await portProblem('127.0.0.1', base.port);
  if (problem) {
    console.error(`Cannot start the demo: ${problem} (another demo or gateway?). Stop it, or set PORT to a free port.`);
    process.exit(1);
  }
  // Given ones are kept (the README's examples sign a callback with theirs); else fresh for each run.
  const appSecret = base.messagingAppSecret ?? random(24);
  const controlToken = random(18);
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, appSecret, delayMs: CALLBACK_DELAY_MS, enabled: true, controlToken });

  // A fresh demo database each run, beside (never instead of) the real one.
  const databasePath = join(projectRoot, 'data', 'demo.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(databasePath + suffix, { force: true });
  const config: Config = {
    ...base, host: '127.0.0.1', databasePath,
    messagingApiUrl: `${sandbox.url}/v23.0`, messagingAppSecret: appSecret, messagingVerifyToken: base.messagingVerifyToken ?? random(12),
  };
  const app = await buildApp(config);

  const admin = await ensureAdmin(app.usersRepo, { email: config.adminEmail, password: config.adminPassword }, app.now());
  const password = random(12);
  const messagingToken = `sandbox-${random(24)}`;
  const created = app.usersRepo.create({ ...DEMO, passwordHash: await hashPassword(password), messagingToken }, app.now());
  if (!created.ok) throw new Error(`demo user not created: ${created.conflict} taken`);
  sandbox.addAccount({ phoneNumberId: DEMO.messagingPhoneNumberId, token: messagingToken });
  sandbox.addAccount(README_ACCOUNT);

  closeWithGrace({ delay: 10000 }, async () => {
    await app.close();
    await sandbox.close();
  });
  await app.listen({ host: config.host, port: config.port });
  const gateway = `http://${config.host}:${(app.server.address() as AddressInfo).port}`;
  sandbox.configureCallbacks({ webhookUrl: `${gateway}/api/messaging/webhook` });

  const json = `-H 'content-type: application/json'`;
  const control = `-H '${CONTROL_TOKEN_HEADER}: ${controlToken}'`;
  const jar = join(tmpdir(), 'gateway-demo-cookies.txt');
  console.log(`
Messaging gateway demo: the gateway and the sandbox network on loopback (database data/demo.db, fresh each run)

  Gateway          ${gateway}   (API docs ${gateway}/docs)
  Sandbox network  ${sandbox.url}   (MESSAGING_API_URL=${config.messagingApiUrl})
  Demo user        ${DEMO.email} / ${password}   (${DEMO.monthlyCredits} credits a month)
  Administrator    ${admin ? `${admin.email} / ${admin.generatedPassword ?? '(ADMIN_PASSWORD)'}` : '(existing)'}   (${gateway}/admin)

Log in, then send a text and a template message:
  curl -c ${jar} ${json} -d '{"email":"${DEMO.email}","password":"${password}"}' ${gateway}/api/login
  curl -b ${jar} ${json} -d '{"to":"15551234567","type":"text","text":{"body":"Hello from the sandbox"}}' ${gateway}/api/message/send
  curl -b ${jar} ${json} -d '{"to":"15551234567","template_name":"order_update","language":"en_US","param1":"Ana","param2":"42"}' ${gateway}/api/message/send2
  curl -b ${jar} '${gateway}/api/user/${created.user.id}/conversations'

The sandbox posts signed sent, delivered and read callbacks to the gateway's webhook, ${CALLBACK_DELAY_MS} ms apart.
Let the contact answer (by phone, or as a user with a username and no phone), make the next send fail, or look at what the sandbox received:
  curl ${control} ${json} -d '{"phoneNumberId":"${DEMO.messagingPhoneNumberId}","from":"15551234567","name":"Ana","text":"Olá! 😀"}' ${sandbox.url}/_sandbox/inbound
  curl ${control} ${json} -d '{"phoneNumberId":"${DEMO.messagingPhoneNumberId}","fromUserId":"US.13491208655302741918","username":"@sheena","name":"Sheena","text":"Hi, no phone number here"}' ${sandbox.url}/_sandbox/inbound
  curl ${control} ${json} -d '{"queue":[{"kind":"fail","error":"undeliverable"}]}' ${sandbox.url}/_sandbox/behaviours
  curl ${control} ${sandbox.url}/_sandbox/requests

The sandbox's control API (/_sandbox/…) answers only with the ${CONTROL_TOKEN_HEADER} header above (a new token each run).
`);
}

main().catch((error: unknown) => {
  console.error('The demo could not start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
