// The bare-framework baseline: plain Fastify with the same JSON parsing and nothing else.
import Fastify from 'fastify';

async function main(): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 3 * 1024 * 1024 });
  app.get('/*', async () => ({ status: 'ok' }));
  app.post('/*', async () => ({ received: true }));
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
void main();
