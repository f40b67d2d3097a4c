// The archive's files: a folder of the database's own beside it (`gateway.db` → `gateway.media/`, 0700), one file per
// message named by its id (0600), written aside as `{id}.part` and renamed into place. Names never come from the sender.
import { existsSync, mkdtempSync, readdirSync, renameSync, statSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { ensurePrivateDir } from '../support/secret-file';

const STORED = /^[1-9][0-9]*$/;
const PART = /^[1-9][0-9]*\.part$/;

/** The archive folder of a database file: its name with `.media` for its extension, so two databases never share one. */
export function mediaDirOf(databasePath: string): string {
  const name = basename(databasePath);
  const stem = extname(name) === '' || extname(name) === '.media' ? name : name.slice(0, -extname(name).length);
  return join(dirname(databasePath), `${stem}.media`);
}

/** The folder every database in a directory shared before each got its own (kept for the upgrade). */
export const legacyMediaDirOf = (databasePath: string): string => join(dirname(databasePath), 'media');

/**
 * The upgrade from the shared `media/`: when this database has no folder of its own yet and every file its rows
 * call stored is in `media/`, that folder is this database's and becomes its own (renamed, nothing copied). Any other
 * case leaves `media/` alone (another database's files, or nothing of ours). Returns whether it was adopted.
 */
export function adoptLegacyMedia(databasePath: string, storedIds: readonly number[]): boolean {
  if (databasePath === ':memory:' || storedIds.length === 0) return false;
  const own = mediaDirOf(databasePath);
  const legacy = legacyMediaDirOf(databasePath);
  if (existsSync(own) || !existsSync(legacy) || !statSync(legacy).isDirectory()) return false;
  const present = new Set(readdirSync(legacy));
  if (!storedIds.every((id) => present.has(String(id)))) return false;
  renameSync(legacy, own);
  return true;
}

export function createMediaFiles(databasePath: string) {
  // An in-memory database lives as long as the process: its files go to a private temp folder.
  const dir = databasePath === ':memory:' ? mkdtempSync(join(tmpdir(), 'gateway-media-')) : mediaDirOf(databasePath);
  ensurePrivateDir(dir);
  const path = (messageId: number) => join(dir, String(messageId));
  const remove = (file: string) => unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });

  return {
    dir,
    /** Where message `messageId`'s file is (or will be). */
    path,
    /** Where its download is written before it is checked. */
    partPath: (messageId: number) => `${path(messageId)}.part`,
    /** The checked download becomes the message's file. */
    keep: (messageId: number): Promise<void> => rename(`${path(messageId)}.part`, path(messageId)),
    /** Deletes the files of these messages (missing ones are fine). */
    async remove(messageIds: readonly number[]): Promise<void> {
      for (const id of messageIds) {
        await remove(path(id));
        await remove(`${path(id)}.part`);
      }
    },
    /** Message ids of the files present, and the leftover partial downloads (names of anything else are ignored). */
    list(): { stored: number[]; parts: string[] } {
      const names = readdirSync(dir);
      return { stored: names.filter((n) => STORED.test(n)).map(Number), parts: names.filter((n) => PART.test(n)).map((n) => join(dir, n)) };
    },
    removeFile: remove,
  };
}
export type MediaFiles = ReturnType<typeof createMediaFiles>;
