// The demo is apart: started from the same project folder as a real gateway, it keeps its database, keys and media in
// data/demo/, its sessions are refused by the gateway, and its start-up cleanup deletes nothing of the gateway's.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { buildApp } from '../src/app';
import { demoConfig, demoFolder, freshDemoFolder } from '../src/sandbox/demo-setup';
import { bearer, createUser, tempDir } from './helper';
import { mediaApp } from './fixtures/stored-media';

t.test('demo and gateway side by side from one folder: separate keys and files, no demo session on the gateway', async (t) => {
  const root = tempDir(t, 'gateway-project-');
  const data = join(root, 'data');
  // The real gateway on the default paths: data/gateway.db, its keys generated beside it, media archived.
  const gateway = await mediaApp(t, { databasePath: join(data, 'gateway.db'), jwtSecret: undefined, messagingTokenKey: undefined });
  const [stored] = await gateway.receive(1);
  const before = { top: readdirSync(data).sort(), media: readdirSync(join(data, 'gateway.media')), jwt: readFileSync(join(data, 'jwt-secret'), 'utf8') };
  t.same(before.top, ['gateway.db', 'gateway.db-shm', 'gateway.db-wal', 'gateway.media', 'jwt-secret', 'token-key']);

  // The demo as `npm run demo` builds it, from the gateway's own settings (an operator's JWT_SECRET included).
  const base = { ...gateway.app.config, jwtSecret: 'operator-secret-operator-secret-0123456789' };
  const startDemo = async () => {
    const app = await buildApp(demoConfig(base, freshDemoFolder(root), { logLevel: 'silent' }));
    t.teardown(() => app.close());
    return app;
  };
  const demo = await startDemo();
  t.equal(demo.config.databasePath, join(demoFolder(root), 'demo.db'));
  t.equal(demo.config.jwtSecret, undefined, "the operator's JWT_SECRET is not the demo's");
  t.equal(demo.mediaFiles.dir, join(demoFolder(root), 'demo.media'));
  t.same(readdirSync(demoFolder(root)).filter((f) => !f.startsWith('demo.db')).sort(), ['demo.media', 'jwt-secret', 'token-key']);
  t.not(readFileSync(join(demoFolder(root), 'jwt-secret'), 'utf8'), before.jwt);

  // The demo's printed accounts: an ADMIN and a CLIENT with the same ids as the gateway's users.
  const demoAdmin = await createUser(demo, { email: 'admin@example.com', role: 'ADMIN' });
  t.equal(demoAdmin.id, gateway.user.id, 'the same user id on both');
  const demoSession = bearer(demo, demoAdmin);
  t.equal((await demo.inject({ method: 'GET', url: '/api/me', headers: demoSession })).statusCode, 200);
  for (const url of ['/api/me', '/api/users', `/api/media/${stored}`]) {
    const res = await gateway.app.inject({ method: 'GET', url, headers: demoSession });
    t.equal(res.statusCode, 401, `${url}: a demo session is refused by the gateway`);
    t.equal(res.json().code, 'UNAUTHORIZED');
  }

  // The demo's own sweeps, and a second demo run's start-up cleanup, leave the gateway's files alone.
  await demo.retentionSweep.run();
  await demo.close();
  const again = await startDemo();
  await again.retentionSweep.run();
  t.same(readdirSync(data).sort(), [...before.top, 'demo'].sort(), 'only data/demo/ was added');
  t.same(readdirSync(join(data, 'gateway.media')), before.media);
  t.equal(readFileSync(join(data, 'jwt-secret'), 'utf8'), before.jwt);
  const served = await gateway.app.inject({ method: 'GET', url: `/api/media/${stored}`, headers: gateway.auth });
  t.equal(served.statusCode, 200);
  t.same(served.rawPayload, gateway.images[0]);
  t.equal((await gateway.app.inject({ method: 'GET', url: '/api/me', headers: gateway.auth })).statusCode, 200, "the gateway's own session still works");
});
