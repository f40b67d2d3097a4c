// `npm run backup -- FILE [--force]`: a consistent copy of the live database (SQLite's online backup, while the gateway
// runs and writes), checked with PRAGMA integrity_check, plus the key files a restore needs, all 0600.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { invocationDir } from '../config';
import { CliError, cliConfig, existingDatabase, runCli, usageError } from './support';

const USAGE = `Usage: npm run backup -- FILE [--force]
  Copies the database at DATABASE_PATH to FILE while the gateway runs, checks the copy, and copies the
  key files beside the database (token-key, jwt-secret) to FILE.token-key and FILE.jwt-secret.
  --force  replace FILE (and those key copies) when they exist`;
/** Beside the database; the copy's messaging tokens and sessions need them (unless set in the environment). */
const KEY_FILES = ['token-key', 'jwt-secret'] as const;

/** A new empty file, 0600 whatever the umask, before SQLite writes into it (SQLite keeps the mode). */
function createPrivate(path: string): void {
  closeSync(openSync(path, 'wx', 0o600));
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Puts `from` at `to`: replacing it when forced, else only when nothing is there (atomically either way). */
function place(from: string, to: string, force: boolean): void {
  if (force) {
    renameSync(from, to);
    return;
  }
  try {
    linkSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${to} exists: choose another name or add --force`);
    throw error;
  } finally {
    rmSync(from, { force: true });
  }
}

/** Copies the database into `partial` (an empty 0600 file) and checks the copy; a single self-contained file. */
async function copyDatabase(source: string, partial: string): Promise<void> {
  const live = new Database(source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    // Everything left in one step after the first: a write by the gateway between two steps would restart the copy.
    await live.backup(partial, { progress: () => 0x7fffffff });
  } finally {
    live.close();
  }
  const copy = new Database(partial, { fileMustExist: true });
  try {
    // The copy carries the WAL flag; a rollback journal keeps it one file (the gateway turns WAL on again when it opens it).
    copy.pragma('journal_mode = DELETE');
    const result = copy.pragma('integrity_check') as { integrity_check: string }[];
    const problems = result.map((row) => row.integrity_check).filter((line) => line !== 'ok');
    if (problems.length > 0) throw new CliError(`The copy failed PRAGMA integrity_check: ${problems.slice(0, 5).join('; ')}`);
  } finally {
    copy.close();
  }
  fsyncFile(partial);
}

async function main(args: string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const force = args.includes('--force');
  const unknown = args.find((arg) => arg.startsWith('-') && arg !== '--force');
  if (unknown !== undefined) throw usageError(`Unknown option ${unknown}`, USAGE);
  const files = args.filter((arg) => !arg.startsWith('-'));
  if (files.length !== 1) throw usageError('Give exactly one FILE to write the backup to', USAGE);

  const config = cliConfig();
  const source = existingDatabase(config);
  const target = resolve(invocationDir(), files[0]!);
  if (target === source) throw new CliError('FILE is the live database itself; choose another name');
  if (!existsSync(dirname(target))) throw new CliError(`The folder ${dirname(target)} does not exist`);
  const keys = KEY_FILES.filter((name) => existsSync(join(dirname(source), name)));
  for (const path of [target, ...keys.map((name) => `${target}.${name}`)]) {
    if (!force && existsSync(path)) throw new CliError(`${path} exists: choose another name or add --force`);
  }

  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  createPrivate(partial);
  try {
    await copyDatabase(source, partial);
    place(partial, target, force);
    chmodSync(target, 0o600);
    for (const name of keys) {
      const aside = `${partial}.${name}`;
      createPrivate(aside);
      copyFileSync(join(dirname(source), name), aside);
      fsyncFile(aside);
      place(aside, `${target}.${name}`, force);
      chmodSync(`${target}.${name}`, 0o600);
    }
  } finally {
    for (const leftover of [partial, `${partial}-journal`, ...keys.map((name) => `${partial}.${name}`)]) rmSync(leftover, { force: true });
  }

  const out = [`Backup written to ${target} (${statSync(target).size} bytes, integrity ok).`];
  for (const name of keys) out.push(`Key file copied: ${target}.${name} (restore it as ${name} beside the database).`);
  if (config.messagingTokenKey !== undefined) out.push('MESSAGING_TOKEN_KEY is set in the environment: keep it with this backup; the stored messaging tokens need it.');
  else if (!keys.includes('token-key')) out.push('Warning: no token-key file beside the database: stored messaging tokens cannot be read after a restore elsewhere.');
  if (config.jwtSecret !== undefined) out.push('JWT_SECRET is set in the environment: sessions survive a restore only with the same value.');
  process.stdout.write(`${out.join('\n')}\n`);
}

runCli(main);
