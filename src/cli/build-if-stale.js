// `npm start`'s build step: compiles to dist/ only when dist/ is missing or older than the sources (plain JS: it runs before any build).
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, utimesSync } = require('node:fs');
const { join, resolve } = require('node:path');

/** What a build reads: these folders (walked, their own mtimes included so a deleted file counts) and root files. */
const SOURCE_DIRS = ['src', 'schemas'];
const isRootSource = (name) => name === 'package.json' || /^tsconfig.*\.json$/.test(name);
/** The build's stamp: tsc writes it on every build that emits; we also set it after each build we run. */
const STAMP = join('dist', '.tsbuildinfo');
const ENTRY = join('dist', 'src', 'server.js');

/** The newest mtime (ms) under `path`, directories included; skips nothing but what cannot be read. */
function newestUnder(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestUnder(join(path, entry)));
  return newest;
}

/** Why `root` needs a build, or undefined when dist/ is newer than every source. */
function staleReason(root) {
  if (!existsSync(join(root, ENTRY)) || !existsSync(join(root, STAMP))) return 'dist/ is missing';
  const built = statSync(join(root, STAMP)).mtimeMs;
  const sources = [
    ...SOURCE_DIRS.map((dir) => join(root, dir)).filter((path) => existsSync(path)),
    ...readdirSync(root).filter(isRootSource).map((name) => join(root, name)),
  ];
  const changed = sources.find((path) => newestUnder(path) > built);
  return changed === undefined ? undefined : `${changed.slice(root.length + 1)} changed since the last build`;
}

/** Builds `root` when stale; returns the exit code (0 when nothing had to be done). */
function buildIfStale(root, log = (line) => process.stderr.write(`${line}\n`)) {
  const reason = staleReason(root);
  if (reason === undefined) return 0;
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    log(`Cannot build: ${reason} and TypeScript is not installed (a production install without dev dependencies). `
      + 'Build where dev dependencies are installed (npm ci && npm run build), then copy dist/ along.');
    return 1;
  }
  log(`Building (${reason})…`);
  const startedAt = new Date();
  const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (status !== 0) return status ?? 1;
  // An incremental build with nothing to emit leaves the stamp alone: date it to this build's start, so a source
  // saved during the build still counts as newer next time.
  utimesSync(join(root, STAMP), startedAt, startedAt);
  return 0;
}

module.exports = { staleReason, buildIfStale };

if (require.main === module) process.exitCode = buildIfStale(resolve(__dirname, '..', '..'));
