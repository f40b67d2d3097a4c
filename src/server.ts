// Entry point: load config, build the app, create the first admin, listen, shut down gracefully.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app';
import { ConfigError, loadConfig, type Config } from './config';
import { ensureAdmin } from './services/bootstrap-admin';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration error: ${error.message}`);
    process.exit(1);
  }
  const app = await buildApp(config);

  const admin = await ensureAdmin(app.usersRepo, { email: config.adminEmail, password: config.adminPassword }, app.now());
  if (admin?.generatedPassword) {
    // Printed once, on the first start only: the operator must keep it.
    app.log.warn({ email: admin.email }, `First administrator created. Password (shown once): ${admin.generatedPassword}`);
  } else if (admin) {
    app.log.info({ email: admin.email }, 'First administrator created from ADMIN_EMAIL/ADMIN_PASSWORD');
  }
  if (!config.messagingVerifyToken) app.log.warn('MESSAGING_VERIFY_TOKEN is not set: every webhook verification will be refused');
  if (!config.messagingAppSecret && config.messagingAllowUnsigned) {
    app.log.warn('MESSAGING_APP_SECRET is not set and MESSAGING_ALLOW_UNSIGNED=true: unsigned webhook callbacks are accepted (local experiments only)');
  } else if (!config.messagingAppSecret) {
    app.log.error('MESSAGING_APP_SECRET is not set: every webhook callback is refused with 503 until it is');
  }

  closeWithGrace({ delay: 10000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else app.log.info({ signal }, 'closing');
    await app.close();
  });

  await app.listen({ host: config.host, port: config.port });
}

void main();
