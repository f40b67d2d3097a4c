// The sandbox network as its own process for the benchmark: one account (more in SANDBOX_ACCOUNTS, `id:token,…`), no
// callbacks, no request log unless SANDBOX_RECORD=1 (the scale scenarios read arrival times from /_sandbox/requests).
import { startSandbox } from '../src/sandbox/server';

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: Number(process.env.PORT), enabled: false, record: process.env.SANDBOX_RECORD === '1' });
  sandbox.addAccount({ phoneNumberId: process.env.SANDBOX_PHONE_NUMBER_ID!, token: process.env.SANDBOX_TOKEN! });
  for (const pair of (process.env.SANDBOX_ACCOUNTS ?? '').split(',').filter(Boolean)) {
    const [phoneNumberId, token] = pair.split(':') as [string, string];
    sandbox.addAccount({ phoneNumberId, token });
  }
  process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
}
void main();
