// `npm run backup -- FILE | DIR/ [--force]`: a consistent copy of the live database (SQLite's online backup, while the
// gateway runs and writes), checked with PRAGMA integrity_check, plus the key files a restore needs, all 0600; into a
// DIR also the archived media: exactly the files the copy lists as stored, so the copy never lists a file it lacks.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { invocationDir } from '../config';
import { legacyMediaDirOf, mediaDirOf } from '../db/media-files';
import { CliError, cliConfig, existingDatabase, runCli, usageError } from './support';

const USAGE = `Usage: npm run backup -- FILE [--force]
       npm run backup -- DIR/ [--force]
  Copies the database at DATABASE_PATH while the gateway runs and checks the copy.
  FILE: the database copy only, with the key files beside the database (token-key, jwt-secret) copied to
        FILE.token-key and FILE.jwt-secret. The archived media are not in it.
  DIR (an existing folder, or a path ending in /): everything a restore needs, laid out as beside the live
        database: the copy under the database's name, token-key, jwt-secret and the media folder holding
        exactly the files the copy lists as stored. Restore: copy the folder's contents beside DATABASE_PATH.
  --force  replace FILE (and those key copies), or the same names in DIR, when they exist`;
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

/** The key files beside the live database (the copy's messaging tokens and sessions need them). */
const keyFilesOf = (source: string) => KEY_FILES.filter((name) => existsSync(join(dirname(source), name)));

/** A private copy of `from` at `to` (0600), on disk before it counts. */
function copyPrivate(from: string, to: string): void {
  createPrivate(to);
  copyFileSync(from, to);
  fsyncFile(to);
}

/** The database copy plus key files beside FILE (FILE.token-key, FILE.jwt-secret). */
async function backupToFile(config: ReturnType<typeof cliConfig>, source: string, target: string, force: boolean): Promise<void> {
  if (!existsSync(dirname(target))) throw new CliError(`The folder ${dirname(target)} does not exist`);
  const keys = keyFilesOf(source);
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
      copyPrivate(join(dirname(source), name), aside);
      place(aside, `${target}.${name}`, force);
      chmodSync(`${target}.${name}`, 0o600);
    }
  } finally {
    for (const leftover of [partial, `${partial}-journal`, ...keys.map((name) => `${partial}.${name}`)]) rmSync(leftover, { force: true });
  }

  const out = [`Backup written to ${target} (${statSync(target).size} bytes, integrity ok).`];
  for (const name of keys) out.push(`Key file copied: ${target}.${name} (restore it as ${name} beside the database).`);
  process.stdout.write(`${[...out, ...keyNotes(config, keys)].join('\n')}\n`);
}

/** What the operator must keep besides the backup when keys come from the environment, or are missing. */
function keyNotes(config: ReturnType<typeof cliConfig>, keys: readonly string[]): string[] {
  const out: string[] = [];
  if (config.messagingTokenKey !== undefined) out.push('MESSAGING_TOKEN_KEY is set in the environment: keep it with this backup; the stored messaging tokens need it.');
  else if (!keys.includes('token-key')) out.push('Warning: no token-key file beside the database: stored messaging tokens cannot be read after a restore elsewhere.');
  if (config.jwtSecret !== undefined) out.push('JWT_SECRET is set in the environment: sessions survive a restore only with the same value.');
  return out;
}

/** The message ids the copy lists with a stored file: exactly the media files the backup must hold. */
function storedInCopy(copy: string): number[] {
  const db = new Database(copy, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT message_id FROM media_downloads WHERE state = 'stored' ORDER BY message_id").pluck().all() as number[];
  } finally {
    db.close();
  }
}

/**
 * Everything a restore needs in DIR, laid out as beside the live database: first the database copy, then the key
 * files, then exactly the media files that copy lists as stored (a file archived after the copy is not in it and not
 * listed by it). All is written in a private staging folder inside DIR and moved into place at the end.
 */
async function backupToDir(config: ReturnType<typeof cliConfig>, source: string, dir: string, force: boolean): Promise<void> {
  if (!existsSync(dirname(dir))) throw new CliError(`The folder ${dirname(dir)} does not exist`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = basename(source);
  const media = basename(mediaDirOf(source));
  const keys = keyFilesOf(source);
  const entries = [name, ...keys, media];
  for (const entry of entries) {
    if (!force && existsSync(join(dir, entry))) throw new CliError(`${join(dir, entry)} exists: choose another folder or add --force`);
  }
  // Before the upgrade's first start the files are still in the shared media/ folder.
  const liveMedia = existsSync(mediaDirOf(source)) ? mediaDirOf(source) : legacyMediaDirOf(source);

  const staging = join(dir, `.backup-partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(staging, { mode: 0o700 });
  let copied = 0;
  let bytes = 0;
  const gone: number[] = [];
  try {
    createPrivate(join(staging, name));
    await copyDatabase(source, join(staging, name));
    for (const key of keys) copyPrivate(join(dirname(source), key), join(staging, key));
    mkdirSync(join(staging, media), { mode: 0o700 });
    for (const id of storedInCopy(join(staging, name))) {
      try {
        copyPrivate(join(liveMedia, String(id)), join(staging, media, String(id)));
      } catch (error) {
        // Deleted since the copy was taken (retention, a deleted user): the restore downloads it again.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        rmSync(join(staging, media, String(id)), { force: true });
        gone.push(id);
        continue;
      }
      copied += 1;
      bytes += statSync(join(staging, media, String(id))).size;
    }
    for (const entry of entries) {
      if (force) rmSync(join(dir, entry), { recursive: true, force: true });
      renameSync(join(staging, entry), join(dir, entry));
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }

  const out = [
    `Backup written to ${join(dir, name)} (${statSync(join(dir, name)).size} bytes, integrity ok).`,
    ...keys.map((key) => `Key file copied: ${join(dir, key)}.`),
    `Media files copied: ${copied} (${bytes} bytes) to ${join(dir, media)}/, exactly those the copy lists as stored.`,
  ];
  if (gone.length > 0) out.push(`${gone.length} media files listed by the copy were deleted meanwhile: after a restore they are downloaded again.`);
  out.push(`Restore: stop the gateway, copy everything in ${dir} into the folder of DATABASE_PATH (as ${name}), start.`);
  process.stdout.write(`${[...out, ...keyNotes(config, keys)].join('\n')}\n`);
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
  const isDir = files[0]!.endsWith('/') || (existsSync(target) && statSync(target).isDirectory());
  if (isDir && target === dirname(source)) throw new CliError('DIR is the live database\'s own folder; choose another one');
  await (isDir ? backupToDir(config, source, target, force) : backupToFile(config, source, target, force));
}

runCli(main);
