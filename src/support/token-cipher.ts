// AES-256-GCM for messaging tokens at rest: `v1:<iv>:<tag>:<ciphertext>` (base64url), and where its key comes from.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { secretBesideDatabase } from './secret-file';

export interface TokenCipher {
  /** A fresh IV each time: sealing the same token twice gives different strings. */
  seal(token: string): string;
  /** The token, or undefined when `sealed` was not sealed with this key (or is damaged). */
  open(sealed: string): string | undefined;
}

const PREFIX = 'v1';
// 12-byte IV -> 16 characters, 16-byte tag -> 22 characters: a plain token never looks like this.
const SEALED = /^v1:([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22}):([A-Za-z0-9_-]*)$/;

/** Whether a stored value is in the sealed format (else it is a plain token from an older version). */
export const isSealed = (stored: string): boolean => SEALED.test(stored);

/** 64 hex characters are the 32 key bytes themselves; any other string is hashed (SHA-256) to 32 bytes. */
export function tokenKeyFrom(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : createHash('sha256').update(text, 'utf8').digest();
}

/** MESSAGING_TOKEN_KEY when given, else the `token-key` file beside the database (64 hex characters, created once). */
export function resolveTokenKey(configured: string | undefined, databasePath: string): Buffer {
  return tokenKeyFrom(configured ?? secretBesideDatabase(databasePath, 'token-key', () => randomBytes(32).toString('hex')));
}

export function createTokenCipher(key: Buffer): TokenCipher {
  if (key.length !== 32) throw new Error('A messaging token key is 32 bytes');
  // The version prefix is authenticated too: a value cannot be relabelled as another format.
  const aad = Buffer.from(PREFIX);
  return {
    seal(token) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
      const data = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
      return [PREFIX, iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join(':');
    },
    open(sealed) {
      const match = SEALED.exec(sealed);
      if (!match) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(match[1]!, 'base64url'), { authTagLength: 16 }).setAAD(aad);
        decipher.setAuthTag(Buffer.from(match[2]!, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(match[3]!, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
