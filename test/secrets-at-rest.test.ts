// Secrets at rest: messaging tokens encrypted in the database, private file modes, the token key.
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Config } from '../src/config';
import { createTokenCipher, isSealed, resolveTokenKey, tokenKeyFrom } from '../src/support/token-cipher';
import { PHONE_ID, testSandbox, textBody, TIMEOUT_MS, TOKEN } from './fixtures/sending';
import { bearer, buildTestApp, createAdmin, createUser, tempDir } from './helper';

interface Teardown { teardown(fn: () => unknown): void }

/** The database file and its -wal/-shm as they are on disk right now. */
function databaseBytes(databasePath: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].map((suffix) => databasePath + suffix).filter(existsSync).map((file) => readFileSync(file)));
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** The app on `databasePath`, sending to a sandbox that knows TOKEN for PHONE_ID. */
async function appOn(t: Teardown, databasePath: string, overrides: Partial<Config> = {}) {
  const sandbox = await testSandbox(t);
  const built = await buildTestApp(t, { databasePath, messagingApiUrl: `${sandbox.url}/v23.0`, messagingTimeoutMs: TIMEOUT_MS, ...overrides });
  const send = (userId: number) => built.app.inject({
    method: 'POST', url: '/api/message/send', headers: bearer(built.app, built.app.usersRepo.findById(userId)!), payload: textBody('hello'),
  });
  return { ...built, sandbox, send };
}

const unreadable = {
  statusCode: 409, code: 'MESSAGING_NOT_CONFIGURED', error: 'Conflict',
  message: 'The messaging token stored for this account cannot be read with the current encryption key; ask an administrator to set it again',
};

t.test('a token set through the API is not on disk in clear, in the database or its WAL; sending still works', async (t) => {
  const databasePath = join(tempDir(t), 'gateway.db');
  const { app, sandbox, send, logs } = await appOn(t, databasePath);
  const auth = bearer(app, await createAdmin(app));
  const created = await app.inject({
    method: 'POST', url: '/api/user/create', headers: auth,
    payload: { email: 'ana@example.com', password: 'ana-password-1', messaging_token: TOKEN, messaging_phone_number_id: PHONE_ID, monthly_credits: 5 },
  });
  t.equal(created.statusCode, 201);
  const id = created.json().id as number;
  // A second write path: the update sets the same token again.
  const updated = await app.inject({ method: 'PUT', url: `/api/user/update/${id}`, headers: auth, payload: { messaging_token: TOKEN } });
  t.equal(updated.statusCode, 200);

  const onDisk = databaseBytes(databasePath);
  t.ok(onDisk.includes('ana@example.com'), 'the scan sees what was written (the e-mail is there)');
  t.ok(existsSync(databasePath + '-wal'), 'the rows are in the WAL');
  t.notOk(onDisk.includes(TOKEN), 'no clear token in the database files');
  t.notOk(onDisk.includes(TOKEN.slice(3, 20)), 'not even a part of it');
  app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
  const checkpointed = readFileSync(databasePath);
  t.ok(checkpointed.includes('ana@example.com'));
  t.notOk(checkpointed.includes(TOKEN), 'nor after a checkpoint into the main file');

  const stored = app.usersRepo.findById(id)!.messagingToken!;
  t.ok(isSealed(stored));
  t.not(stored, TOKEN, 'not stored in clear');
  t.equal(createTokenCipher(resolveTokenKey(undefined, databasePath)).open(stored), TOKEN, 'sealed with the key beside the database');
  for (const answer of [created, updated]) {
    t.notOk('messaging_token' in answer.json(), 'the answer has no token field');
    t.equal(answer.json().messaging_token_set, true, 'only that one is set');
    t.notOk(answer.body.includes(TOKEN) || answer.body.includes(stored), 'neither the token nor its sealed form is answered');
  }
  const res = await send(id);
  t.equal(res.statusCode, 201);
  t.equal(sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`, 'the network gets the clear token');
  t.notOk(logs().includes(TOKEN), 'nor is it in the logs');
  t.notOk(logs().includes(stored), 'nor its sealed form');
});

t.test('a plain token stored by an older version is encrypted at the next start-up, once, and still sends', async (t) => {
  const databasePath = join(tempDir(t), 'gateway.db');
  const first = await appOn(t, databasePath);
  const ana = await createUser(first.app, { email: 'ana@example.com', messagingPhoneNumberId: PHONE_ID, monthlyCredits: 5 });
  const ben = await createUser(first.app, { email: 'ben@example.com', messagingToken: 'ben-token' });
  const benSealed = first.app.usersRepo.findById(ben.id)!.messagingToken;
  first.app.db.$client.prepare('UPDATE users SET messaging_token = ? WHERE id = ?').run(TOKEN, ana.id);
  await first.app.close();
  t.ok(databaseBytes(databasePath).includes(TOKEN), 'the old version left it in clear');

  const second = await appOn(t, databasePath);
  const stored = second.app.usersRepo.findById(ana.id)!.messagingToken!;
  t.ok(isSealed(stored));
  t.equal(second.app.tokenCipher.open(stored), TOKEN);
  t.equal(second.app.usersRepo.findById(ben.id)!.messagingToken, benSealed, 'a sealed token is left as it is');
  const line = second.logs().split('\n').find((entry) => entry.includes('stored in plain text'));
  t.match(JSON.parse(line!), { level: 30, count: 1, msg: 'Encrypted messaging tokens that were stored in plain text' });
  second.app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
  t.notOk(databaseBytes(databasePath).includes(TOKEN), 'gone from the files');
  const res = await second.send(ana.id);
  t.equal(res.statusCode, 201);
  t.equal(second.sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
  await second.app.close();

  const third = await appOn(t, databasePath);
  t.equal(third.app.usersRepo.findById(ana.id)!.messagingToken, stored, 'not sealed twice');
  t.notMatch(third.logs(), /stored in plain text/);
});

t.test('a token the current key cannot open: 409 telling to set it again, logged once, nothing sent or charged', async (t) => {
  const databasePath = join(tempDir(t), 'gateway.db');
  const first = await appOn(t, databasePath, { messagingTokenKey: 'the-first-key-the-first-key-the-first-key' });
  const ana = await createUser(first.app, { email: 'ana@example.com', messagingToken: TOKEN, messagingPhoneNumberId: PHONE_ID, monthlyCredits: 5 });
  t.equal((await first.send(ana.id)).statusCode, 201);
  await first.app.close();

  const second = await appOn(t, databasePath, { messagingTokenKey: 'another-key-another-key-another-key-another' });
  const startLine = second.logs().split('\n').find((entry) => entry.includes('cannot be decrypted with this key'));
  t.match(JSON.parse(startLine!), { level: 50, count: 1 }, 'start-up says how many tokens are unreadable');
  for (let i = 0; i < 2; i++) {
    const res = await second.send(ana.id);
    t.equal(res.statusCode, 409);
    t.same(res.json(), unreadable);
  }
  t.equal(second.sandbox.requests.length, 0, 'nothing reached the network');
  t.equal(second.app.creditsRepo.used(ana.id, new Date().toISOString().slice(0, 7)), 1, 'nothing charged beyond the first send');
  const perUser = second.logs().split('\n').filter((entry) => entry.includes("This user's messaging token cannot be decrypted"));
  t.equal(perUser.length, 1, 'logged once, not on every send');
  t.match(JSON.parse(perUser[0]!), { level: 50, userId: ana.id });
  t.notOk(second.logs().includes(TOKEN));

  // The remedy: an administrator sets the token again.
  const auth = bearer(second.app, await createAdmin(second.app));
  const reset = await second.app.inject({ method: 'PUT', url: `/api/user/update/${ana.id}`, headers: auth, payload: { messaging_token: TOKEN } });
  t.equal(reset.statusCode, 200);
  t.equal((await second.send(ana.id)).statusCode, 201);
  t.equal(second.sandbox.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
});

t.test('the generated token-key file: 0600, reused, its content works as MESSAGING_TOKEN_KEY; losing it makes tokens unreadable', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  const first = await appOn(t, databasePath);
  const ana = await createUser(first.app, { email: 'ana@example.com', messagingToken: TOKEN, messagingPhoneNumberId: PHONE_ID, monthlyCredits: 5 });
  await first.app.close();
  const keyFile = join(dir, 'token-key');
  const key = readFileSync(keyFile, 'utf8');
  t.match(key, /^[0-9a-f]{64}\n$/);
  t.equal(mode(keyFile), 0o600);

  const reused = await appOn(t, databasePath);
  t.equal((await reused.send(ana.id)).statusCode, 201, 'the next start reads the same key');
  await reused.app.close();
  t.equal(readFileSync(keyFile, 'utf8'), key, 'the file is not rewritten');

  const given = await appOn(t, databasePath, { messagingTokenKey: key.trim() });
  t.equal((await given.send(ana.id)).statusCode, 201, 'the file content given as MESSAGING_TOKEN_KEY is the same key');
  await given.app.close();

  rmSync(keyFile);
  const lost = await appOn(t, databasePath);
  t.not(readFileSync(keyFile, 'utf8'), key, 'a new key was generated');
  t.same((await lost.send(ana.id)).json(), unreadable);
});

t.test('the cipher: fresh IV each time, tampering and other keys detected, the key rule', async (t) => {
  const cipher = createTokenCipher(tokenKeyFrom('a-passphrase-a-passphrase-a-passphrase'));
  const a = cipher.seal(TOKEN);
  const b = cipher.seal(TOKEN);
  t.not(a, b, 'the same token sealed twice differs');
  t.match(a, /^v1:[\w-]{16}:[\w-]{22}:[\w-]+$/);
  t.equal(cipher.open(a), TOKEN);
  t.equal(cipher.open(b), TOKEN);
  const [prefix, iv, tag, data] = a.split(':') as [string, string, string, string];
  const flipped = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
  t.equal(cipher.open([prefix, iv, tag, flipped(data)].join(':')), undefined, 'a changed ciphertext');
  t.equal(cipher.open([prefix, iv, flipped(tag), data].join(':')), undefined, 'a changed tag');
  t.equal(cipher.open([prefix, flipped(iv), tag, data].join(':')), undefined, 'a changed IV');
  t.equal(cipher.open([prefix, iv, tag.slice(1), data].join(':')), undefined, 'a short tag');
  t.equal(cipher.open(TOKEN), undefined, 'a plain token');
  t.equal(createTokenCipher(tokenKeyFrom('another-passphrase-another-passphrase')).open(a), undefined, 'another key');
  for (const plain of [TOKEN, 'EAAGm0PX4ZCpsBA', 'v1:abc:def:ghi', 'v1:' + 'A'.repeat(40)]) t.notOk(isSealed(plain), plain);

  t.same(tokenKeyFrom('00'.repeat(31) + 'ff'), Buffer.from('00'.repeat(31) + 'ff', 'hex'), '64 hex characters are the key itself');
  t.same(tokenKeyFrom('a-passphrase-a-passphrase-a-passphrase').length, 32);
  t.not(tokenKeyFrom('a-passphrase-a-passphrase-a-passphrase').toString('hex'), tokenKeyFrom('a-passphrase-a-passphrase-a-passphrasf').toString('hex'));
  t.throws(() => createTokenCipher(Buffer.alloc(16)));
  t.not(resolveTokenKey(undefined, ':memory:').toString('hex'), resolveTokenKey(undefined, ':memory:').toString('hex'), 'in memory: a key per process');
});

for (const umask of [0o000, 0o022]) {
  t.test(`files are created 0600 and directories 0700 under umask ${umask.toString(8).padStart(3, '0')}`, async (t) => {
    const previous = process.umask(umask);
    t.teardown(() => { process.umask(previous); });
    const dir = tempDir(t);
    const databasePath = join(dir, 'data', 'deeper', 'gateway.db');
    const { app, logs } = await buildTestApp(t, { databasePath, jwtSecret: undefined });
    await createUser(app, { email: 'ana@example.com', messagingToken: TOKEN });
    const files = ['gateway.db', 'gateway.db-wal', 'gateway.db-shm', 'jwt-secret', 'token-key'].map((name) => join(dir, 'data', 'deeper', name));
    for (const file of files) t.equal(mode(file), 0o600, file);
    t.equal(mode(join(dir, 'data')), 0o700);
    t.equal(mode(join(dir, 'data', 'deeper')), 0o700);
    t.notMatch(logs(), /Other users of this machine/, 'no warning for private files');

    // SQLite deletes -wal/-shm at close and makes them again later: still 0600.
    await app.close();
    t.notOk(existsSync(files[1]!), 'the WAL went away at close');
    const again = await buildTestApp(t, { databasePath, jwtSecret: undefined });
    await createUser(again.app, { email: 'ben@example.com' });
    again.app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
    await createUser(again.app, { email: 'cy@example.com' });
    for (const file of files) t.equal(mode(file), 0o600, `${file} after a restart and a checkpoint`);
  });
}

t.test('start-up warns when other users can read the database directory or file', async (t) => {
  const dir = tempDir(t);
  const databasePath = join(dir, 'gateway.db');
  writeFileSync(databasePath, '');
  chmodSync(dir, 0o755);
  chmodSync(databasePath, 0o644);
  const { app, logs } = await buildTestApp(t, { databasePath });
  await app.close();
  const warnings = logs().split('\n').filter((line) => line.includes('Other users of this machine')).map((line) => JSON.parse(line) as { level: number; path: string });
  t.same(warnings.map((w) => [w.level, w.path]), [[40, dir], [40, databasePath]]);
  t.equal(mode(databasePath), 0o644, 'an existing file keeps the mode its owner gave it');

  chmodSync(dir, 0o750);
  chmodSync(databasePath, 0o640);
  const quiet = await buildTestApp(t, { databasePath });
  t.notMatch(quiet.logs(), /Other users of this machine/, 'group access alone is the owner\'s choice');
});
