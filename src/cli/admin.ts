// `npm run admin -- reset-password EMAIL | create-admin EMAIL`: user administration from the shell, on the same
// database, repository and password hashing as the API, while the gateway runs (WAL; writes wait for its lock).
import { Value } from '@sinclair/typebox/value';
import { Email } from '../../schemas/common';
import { createAuditRepo } from '../db/audit-repo';
import { openDatabase } from '../db/client';
import { createUsersRepo } from '../db/users-repo';
import { createWriter } from '../db/writer';
import { randomPassword, resetPassword as resetUserPassword } from '../services/password-reset';
import { recordAudit } from '../services/audit';
import { hashPassword } from '../services/passwords';
import { createTokenCipher, resolveTokenKey } from '../support/token-cipher';
import { CliError, cliConfig, existingDatabase, runCli, usageError } from './support';

const USAGE = `Usage: npm run admin -- COMMAND EMAIL
  reset-password EMAIL  sets a new random password (printed once) and ends all of that user's sessions
  create-admin EMAIL    creates an ADMIN with a random password printed once, or with the password read
                        from standard input when it is piped: its first line, without control characters
                        (echo "$PASSWORD" | npm run admin -- create-admin EMAIL)`;
// As the API: 8 to 256 characters.
const MIN_PASSWORD = 8;
const MAX_PASSWORD = 256;

/** Control characters (C0, DEL, C1): a line break or escape inside a password is a mistake, never a choice. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The piped password: the first line of standard input, as `passwd`-style tools read it ("password\npassword\n"
 * gives "password"); undefined when stdin is a terminal or its first line is empty.
 */
async function pipedPassword(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    // The first line is all we read; never buffer an endless stream (anything this long is refused below anyway).
    if ((chunk as Buffer).includes(0x0a) || length > 4 * MAX_PASSWORD) break;
  }
  const text = Buffer.concat(chunks).toString('utf8').split('\n', 1)[0]!.replace(/\r$/, '');
  if (text === '') return undefined;
  if (CONTROL.test(text)) throw new CliError('The password read from standard input contains a control character (a tab, an escape …); choose one without');
  if (text.length < MIN_PASSWORD || text.length > MAX_PASSWORD) {
    throw new CliError(`The password read from standard input must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters long`);
  }
  return text;
}

function openUsers() {
  const config = cliConfig();
  const path = existingDatabase(config);
  const db = openDatabase(path);
  // The same key the gateway uses for this database, so a user written here keeps readable tokens.
  const users = createUsersRepo(db, createTokenCipher(resolveTokenKey(config.messagingTokenKey, path)));
  return { users, audit: createAuditRepo(db), writer: createWriter(db.$client), close: () => db.$client.close() };
}

async function resetPassword(email: string): Promise<void> {
  const { users, audit, writer, close } = openUsers();
  try {
    // The audit log tells it came from the shell: no actor, no address.
    const reset = await resetUserPassword({ users, hash: hashPassword, write: (body) => writer.writeNow(body), now: () => new Date() },
      () => users.findByEmail(email), (user) => recordAudit(audit, {
        actor: { id: null, email: null, ip: null }, action: 'user.password_reset', target: { id: user.id, email: user.email },
        details: { via: 'admin command', sessions_ended: true }, at: new Date(),
      }));
    if (!reset) throw new CliError(`No user has the e-mail ${email}`);
    process.stdout.write(`Password of ${reset.user.email} reset; all of its sessions have ended.\nNew password (shown once): ${reset.password}\n`);
  } finally {
    close();
  }
}

async function createAdmin(email: string): Promise<void> {
  const piped = await pipedPassword();
  const password = piped ?? randomPassword();
  const passwordHash = await hashPassword(password);
  const { users, writer, close } = openUsers();
  try {
    const created = writer.writeNow(() => (users.findByEmail(email) ? undefined : users.create({ email, passwordHash, role: 'ADMIN' }, new Date())));
    if (!created?.ok) throw new CliError(`A user with the e-mail ${email} already exists (reset its password with reset-password)`);
    const shown = piped === undefined ? `\nPassword (shown once): ${password}` : ' with the password read from standard input';
    process.stdout.write(`Administrator ${created.user.email} created${shown}\n`);
  } finally {
    close();
  }
}

async function main(args: string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command, email, ...rest] = args;
  if (command !== 'reset-password' && command !== 'create-admin') throw usageError(`Unknown command ${JSON.stringify(command ?? '')}`, USAGE);
  if (email === undefined || rest.length > 0) throw usageError(`${command} takes exactly one EMAIL`, USAGE);
  if (!Value.Check(Email, email)) throw new CliError(`${JSON.stringify(email)} is not a valid e-mail address`);
  await (command === 'reset-password' ? resetPassword(email) : createAdmin(email));
}

runCli(main);
