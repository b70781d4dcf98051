#!/usr/bin/env node
/**
 * `npm run build` (also run by `npm ci` through `prepare`): compiles src/ and examples/ with tsc
 * (tsconfig.build.json) into dist/, copies the files tsc does not emit (the dashboard's HTML, CSS and
 * icon) next to the compiled code, compiles the dashboard's browser code into dist/browser/
 * (scripts/build-ui.mjs), and bundles the workflow code once into dist/workflow-bundle.js, which the
 * worker loads instead of running webpack at start.
 *
 * `--if-needed` (npm start, serve, admin) builds only when dist/ is missing or older than a source.
 * Plain Node on purpose: it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildUi, newest } from './build-ui.mjs';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const dist = path.join(root, 'dist');
/** Written last: its time is the build's. */
const stamp = path.join(dist, '.build-stamp');
const SOURCE_DIRS = ['src', 'examples'];
const SOURCE_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/build-ui.mjs',
];

/** dist/ is complete and newer than every source (an image without sources counts as fresh). */
export function distIsFresh() {
  if (!existsSync(stamp)) return false;
  const inputs = [...SOURCE_DIRS, ...SOURCE_FILES].map((p) => newest(path.join(root, p)));
  return Math.max(...inputs) <= statSync(stamp).mtimeMs;
}

/** Copies every file under `dir` that tsc leaves out (anything but TypeScript and its tsconfig) into dist/. */
function copyAssets(dir) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(rel);
    else if (!entry.name.endsWith('.ts') && entry.name !== 'tsconfig.json') {
      cpSync(path.join(root, rel), path.join(dist, rel));
    }
  }
}

export async function build() {
  const started = Date.now();
  rmSync(dist, { recursive: true, force: true });
  const require = createRequire(import.meta.url);
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (tsc.status !== 0) throw new Error(`tsc failed (exit ${tsc.status ?? tsc.signal})`);
  for (const dir of SOURCE_DIRS) copyAssets(dir);
  buildUi();

  // The compiled worker module names what goes into the bundle, so the build and the in-process
  // fallback (tests) bundle the same way.
  const worker = require(path.join(dist, 'src/temporal/worker.js'));
  const { bundleWorkflowCode } = require('@temporalio/worker');
  const { code } = await bundleWorkflowCode(worker.workflowBundleOptions());
  mkdirSync(path.dirname(worker.PREBUILT_WORKFLOW_BUNDLE), { recursive: true });
  writeFileSync(worker.PREBUILT_WORKFLOW_BUNDLE, code);

  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`build: dist/ ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ifNeeded = process.argv.includes('--if-needed');
  if (ifNeeded && distIsFresh()) process.exit(0);
  if (ifNeeded) process.stderr.write('build: dist/ is missing or older than the sources; building\n');
  build().catch((err) => {
    process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
