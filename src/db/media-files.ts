// The archive's files: `media/` beside the database (0700), one file per message named by its id (0600), written
// aside as `{id}.part` and renamed into place. Names never come from the sender.
import { mkdtempSync, readdirSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensurePrivateDir } from '../support/secret-file';

const STORED = /^[1-9][0-9]*$/;
const PART = /^[1-9][0-9]*\.part$/;

export function createMediaFiles(databasePath: string) {
  // An in-memory database lives as long as the process: its files go to a private temp folder.
  const dir = databasePath === ':memory:' ? mkdtempSync(join(tmpdir(), 'gateway-media-')) : join(dirname(databasePath), 'media');
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
