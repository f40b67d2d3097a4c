// `npm start` builds only when dist/ is missing or older than the sources: the decision, then a real build in a copy.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/config';
import { tempDir } from './helper';

const { staleReason } = createRequire(__filename)('../src/cli/build-if-stale.js') as { staleReason: (root: string) => string | undefined };

const BUILT = new Date('2026-01-01T12:00:00Z');
const OLDER = new Date('2026-01-01T11:00:00Z');
const NEWER = new Date('2026-01-01T13:00:00Z');

/** A project tree whose every source is older than its build. */
function project(root: string): void {
  const files = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src/app.ts', 'src/db/client.ts', 'schemas/common.ts', 'templates/layout.eta', 'README.md'];
  for (const file of files) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), file.endsWith('.json') ? '{}' : '');
  }
  for (const path of [...files, 'src/db', 'src', 'schemas', 'templates']) utimesSync(join(root, path), OLDER, OLDER);
  mkdirSync(join(root, 'dist/src'), { recursive: true });
  writeFileSync(join(root, 'dist/src/server.js'), '');
  writeFileSync(join(root, 'dist/.tsbuildinfo'), '');
  utimesSync(join(root, 'dist/.tsbuildinfo'), BUILT, BUILT);
}

t.test('the decision: missing or older dist/ builds; a newer one does not', async (t) => {
  const root = tempDir(t);
  t.equal(staleReason(root), 'dist/ is missing');
  project(root);
  t.equal(staleReason(root), undefined, 'every source older than the build');

  const newer = (path: string) => { utimesSync(join(root, path), NEWER, NEWER); };
  const older = (path: string) => { utimesSync(join(root, path), OLDER, OLDER); };
  for (const path of ['src/db/client.ts', 'schemas/common.ts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    newer(path);
    t.equal(staleReason(root), `${path.split('/')[0]} changed since the last build`, `${path} newer`);
    older(path);
  }
  t.equal(staleReason(root), undefined);

  newer('templates/layout.eta');
  newer('README.md');
  t.equal(staleReason(root), undefined, 'templates and docs are read at run time, not built');

  // A deleted source changes its folder's mtime, not any remaining file's.
  rmSync(join(root, 'src/db/client.ts'));
  t.match(staleReason(root), /^src changed/, 'a deleted source counts');
  older('src/db');
  t.equal(staleReason(root), undefined);

  rmSync(join(root, 'dist/.tsbuildinfo'));
  t.equal(staleReason(root), 'dist/ is missing', 'no stamp: built again');
  writeFileSync(join(root, 'dist/.tsbuildinfo'), '');
  rmSync(join(root, 'dist/src/server.js'));
  t.equal(staleReason(root), 'dist/ is missing', 'no entry point: built again');
});

t.test('a real run in a copy of the project: builds once, not again, and again after a source changes', async (t) => {
  const root = tempDir(t, 'gateway-build-');
  for (const path of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'schemas']) cpSync(join(projectRoot, path), join(root, path), { recursive: true });
  symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'));
  const run = () => {
    const result = spawnSync(process.execPath, [join(root, 'src/cli/build-if-stale.js')], { cwd: root, encoding: 'utf8' });
    return { status: result.status, stderr: result.stderr };
  };
  const stamp = () => statSync(join(root, 'dist/.tsbuildinfo')).mtimeMs;
  const entry = () => statSync(join(root, 'dist/src/server.js')).mtimeMs;

  t.same(run(), { status: 0, stderr: 'Building (dist/ is missing)…\n' });
  const [builtStamp, builtEntry] = [stamp(), entry()];

  t.same(run(), { status: 0, stderr: '' }, 'nothing changed: no build');
  t.equal(stamp(), builtStamp, 'dist/ untouched');
  t.equal(entry(), builtEntry);

  const future = new Date(Date.now() + 60_000);
  utimesSync(join(root, 'src/server.ts'), future, future);
  t.same(run(), { status: 0, stderr: 'Building (src changed since the last build)…\n' });
  t.ok(stamp() > builtStamp, 'built again');
});

t.test('a stale dist/ without TypeScript installed (production install) stops start with what to do', async (t) => {
  const root = tempDir(t);
  project(root);
  mkdirSync(join(root, 'src/cli'), { recursive: true });
  cpSync(join(projectRoot, 'src/cli/build-if-stale.js'), join(root, 'src/cli/build-if-stale.js'));
  const result = spawnSync(process.execPath, [join(root, 'src/cli/build-if-stale.js')], { cwd: root, encoding: 'utf8' });
  t.equal(result.status, 1);
  t.match(result.stderr, /^Cannot build: src changed since the last build and TypeScript is not installed .*npm ci && npm run build/);
});

t.test('the bench and the build compile into dist/ with one incremental record, so neither leaves the other\'s output stale', async (t) => {
  const ts = await import('typescript');
  const recordOf = (file: string): string | undefined => {
    const path = join(projectRoot, file);
    const { config } = ts.readConfigFile(path, ts.sys.readFile);
    return ts.parseJsonConfigFileContent(config, ts.sys, projectRoot, undefined, path).options.tsBuildInfoFile;
  };
  const build = recordOf('tsconfig.build.json');
  t.equal(build, join(projectRoot, 'dist/.tsbuildinfo'), 'the build writes the stamp npm start reads');
  t.equal(recordOf('tsconfig.bench.json'), build, 'the bench writes the same record');
});
