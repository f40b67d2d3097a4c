// Password hashing with argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane): about 55 ms a hash
// on a 2-core box, where the package default (64 MiB, 3 passes, 4 lanes) costs about 180 ms.
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, OPTIONS);

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

// Verified against when the e-mail is unknown, so both failures cost the same time.
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword('not-a-real-password-' + Math.random());
  return dummyHash;
}
