// WAL checkpoints of a listening server run in the listing thread, not in the writer's commits: the writer's connection
// lets the WAL grow to WRITER_CHECKPOINT_PAGES, and the pages written reach the database file all the same.
import { statSync } from 'node:fs';
import t from 'tap';
import { WRITER_CHECKPOINT_PAGES } from '../src/db/checkpoints';
import { buildTestApp, createUser } from './helper';

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
};

t.test('a listening server: the writer never checkpoints below its limit, the listing thread copies the WAL into the file', async (t) => {
  const { app, config } = await buildTestApp(t);
  const client = app.db.$client;
  t.equal(client.pragma('wal_autocheckpoint', { simple: true }), 1000, 'an app that does not listen checkpoints as SQLite does');
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.equal(client.pragma('wal_autocheckpoint', { simple: true }), WRITER_CHECKPOINT_PAGES);

  const user = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '1001' });
  const fileBytes = () => statSync(config.databasePath).size;
  const before = fileBytes();
  // About 2,000 pages of messages: more than SQLite's own 1,000-page checkpoint, less than the writer's limit.
  await app.writer.write(() => {
    for (let i = 0; i < 2000; i++) {
      app.messagesRepo.insertInbound({ userId: user.id, contactWaId: '15550000001', contactName: null, wamid: `wamid.${i}`, type: 'text',
        text: 'x'.repeat(3000), payloadJson: '{}', createdAt: 1_790_000_000_000 + i });
    }
  });
  t.equal(fileBytes(), before, 'the commit itself copied nothing into the database file');
  await until(() => fileBytes() > before + 2000 * 3000);
  t.pass('the listing thread checkpointed the WAL into the database file');
  t.equal(client.prepare('SELECT count(*) FROM messages').pluck().get(), 2000);
});
