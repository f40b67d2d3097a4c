// Entry point: load config, build the app, create the first admin, listen, shut down gracefully.
import closeWithGrace from 'close-with-grace';
import { buildApp, type App } from './app';
import { ConfigError, dotenvWarning, loadConfig, type Config } from './config';
import { ensureAdmin } from './services/bootstrap-admin';

/** Requests in flight get this long to finish after SIGTERM/SIGINT; connections still open then are cut. */
const GRACE_MS = 10_000;
/** Should closing itself hang (a stuck onClose hook), the process exits 1 after this long. */
const BACKSTOP_MS = 15_000;

/** Stops accepting, lets requests in flight finish, closes the app (database last), so the process exits 0. */
async function closeGracefully(app: App): Promise<void> {
  // Node closes idle keep-alive connections once, when closing starts; those that fall idle later are closed here.
  const idle = setInterval(() => app.server.closeIdleConnections(), 100);
  const cut = setTimeout(() => {
    app.log.warn({ graceMs: GRACE_MS }, 'requests still running after the grace period: closing their connections');
    app.server.closeAllConnections();
  }, GRACE_MS);
  try {
    await app.close();
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
}

/**
 * SIGTERM and SIGINT reach node and npm together (Ctrl-C, systemctl stop, kill -PGID) and npm forwards them to node
 * again, so node sees one signal twice: close-with-grace would take the second as "exit now". The signals are handled
 * here (a repeat is only logged); close-with-grace keeps the crash handlers, the other signals and the backstop.
 */
function closeOnSignals(app: App): void {
  const graceful = closeWithGrace({
    delay: BACKSTOP_MS, skip: ['SIGTERM', 'SIGINT'],
    logger: { error: (message: unknown) => app.log.error(String(message)) },
  }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else if (signal) app.log.info({ signal }, 'closing');
    await closeGracefully(app);
  });
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return void app.log.info({ signal }, 'already closing: requests in flight are finishing');
    closing = true;
    app.log.info({ signal }, 'closing');
    void graceful.close();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
  const app = await buildApp(config, { processMetrics: true });

  const admin = await ensureAdmin(app.usersRepo, { email: config.adminEmail, password: config.adminPassword }, app.now());
  if (admin?.generatedPassword) {
    // Printed once, on the first start only: the operator must keep it.
    app.log.warn({ email: admin.email }, `First administrator created. Password (shown once): ${admin.generatedPassword}`);
  } else if (admin) {
    app.log.info({ email: admin.email }, 'First administrator created from ADMIN_EMAIL/ADMIN_PASSWORD');
  }
  const dotenv = dotenvWarning();
  if (dotenv) app.log.warn(dotenv);
  if (!config.messagingVerifyToken) app.log.warn('MESSAGING_VERIFY_TOKEN is not set: every webhook verification will be refused');
  if (!config.messagingAppSecret && config.messagingAllowUnsigned) {
    app.log.warn('MESSAGING_APP_SECRET is not set and MESSAGING_ALLOW_UNSIGNED=true: unsigned webhook callbacks are accepted (local experiments only)');
  } else if (!config.messagingAppSecret) {
    app.log.error('MESSAGING_APP_SECRET is not set: every webhook callback is refused with 503 until it is');
  }

  closeOnSignals(app);
  await app.listen({ host: config.host, port: config.port });
}

void main();
