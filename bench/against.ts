// `--against <git ref>`: that ref built in a temporary git worktree, to run beside the current build.
// node_modules is a symlink to ours when the ref's package-lock.json is the same, `npm ci` there otherwise.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RefBuild {
  label: string; sha: string; server: string; remove: () => void;
  /** The ref's own migrations: the bench seeds its database with that schema (this tree upgrades its copy). */
  migrations: string;
}

const git = (root: string, ...args: string[]): string => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();

interface LockEntry { version?: string; integrity?: string; hasInstallScript?: boolean }
const lockPackages = (dir: string): Record<string, LockEntry> =>
  (JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;

/**
 * `npm ci` without install scripts, then the native packages: the compiled `build/` copied from ours where the
 * version is the same (compiling better-sqlite3 takes minutes), `npm rebuild` for the others.
 */
function installDependencies(root: string, dir: string): void {
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const ours = lockPackages(root);
  const rebuild: string[] = [];
  for (const [path, entry] of Object.entries(lockPackages(dir))) {
    if (!entry.hasInstallScript || !path.startsWith('node_modules/')) continue;
    const mine = ours[path];
    const built = join(root, path, 'build');
    if (mine !== undefined && mine.version === entry.version && mine.integrity === entry.integrity) {
      if (existsSync(built)) cpSync(built, join(dir, path, 'build'), { recursive: true });
    } else {
      rebuild.push(path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    }
  }
  if (rebuild.length > 0) execFileSync('npm', ['rebuild', ...rebuild], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The label of the working tree: its commit, with `+changes` when files differ from it. */
export function currentLabel(root: string): string {
  try {
    const sha = git(root, 'rev-parse', '--short', 'HEAD');
    return git(root, 'status', '--porcelain', '--untracked-files=no') === '' ? sha : `${sha}+changes`;
  } catch {
    return 'current';
  }
}

/**
 * Checks out `ref` of the repository at `root` into a worktree under the temp folder and builds it (its own
 * tsconfig.build.json, its own TypeScript). BENCH_KEEP_REF=1 keeps the worktree and reuses it next time.
 */
export function buildRef(root: string, ref: string, log: (line: string) => void): RefBuild {
  const sha = git(root, 'rev-parse', '--verify', `${ref}^{commit}`);
  const label = `${ref} (${sha.slice(0, 7)})`;
  const dir = join(tmpdir(), `gateway-bench-ref-${sha.slice(0, 12)}`);
  const keep = process.env.BENCH_KEEP_REF === '1';
  const server = join(dir, 'dist', 'src', 'server.js');
  const remove = () => {
    if (keep) return;
    try {
      git(root, 'worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      git(root, 'worktree', 'prune');
    }
  };
  if (keep && existsSync(server)) {
    log(`reusing the build of ${label} in ${dir}\n`);
    return { label, sha, server, remove, migrations: join(dir, 'data', 'migrations') };
  }
  if (existsSync(dir)) {
    rmSync(dir, { recursive: true, force: true });
    git(root, 'worktree', 'prune');
  }
  log(`checking out ${label} into ${dir}…\n`);
  git(root, 'worktree', 'add', '--detach', dir, sha);
  try {
    const sameLock = readFileSync(join(root, 'package-lock.json'), 'utf8') === readFileSync(join(dir, 'package-lock.json'), 'utf8');
    if (sameLock && existsSync(join(root, 'node_modules'))) {
      symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir');
    } else {
      log(`${ref}'s package-lock.json differs: npm ci in the worktree…\n`);
      installDependencies(root, dir);
    }
    log(`building ${label}…\n`);
    execFileSync(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
    if (!existsSync(server)) throw new Error(`${label} has no dist/src/server.js after its build`);
  } catch (error) {
    remove();
    throw error;
  }
  return { label, sha, server, remove, migrations: join(dir, 'data', 'migrations') };
}
