// The sandbox network as its own process for the benchmark: one account, no callbacks, no request log.
import { startSandbox } from '../src/sandbox/server';

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: Number(process.env.PORT), enabled: false, record: false });
  sandbox.addAccount({ phoneNumberId: process.env.SANDBOX_PHONE_NUMBER_ID!, token: process.env.SANDBOX_TOKEN! });
  process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
}
void main();
