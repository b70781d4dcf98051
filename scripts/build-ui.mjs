#!/usr/bin/env node
/**
 * Compiles the dashboard's browser code (src/api/dashboard/ui/, TypeScript with its own tsconfig.json:
 * DOM library, ES modules) with tsc into dist/browser/, where src/api/dashboard/ui.ts serves it from
 * (dist/browser/api/dashboard/ui/*.js). Run by `npm run build` (scripts/build.mjs) and, with
 * `--if-needed`, by the test setup (test/global-setup.ts), so a fresh clone's `npm test` has it.
 *
 * The output is written to a scratch folder and moved into place, so a stale module from a renamed
 * source never lingers and a half-written folder is never served. Plain Node: nothing is compiled yet.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
/** Where the compiled browser modules go (the tsconfig's outDir). */
export const UI_OUT = path.join(root, 'dist', 'browser');
const UI_PROJECT = 'src/api/dashboard/ui';
/** The UI's sources: its folder, the view shapes it shares with the server, and this script. */
const UI_SOURCES = [UI_PROJECT, 'src/api/dashboard/view-types.ts', 'scripts/build-ui.mjs'];
/** Written last: its time is the compilation's. */
const stamp = path.join(UI_OUT, '.ui-stamp');

/** Newest modification time under `p` (0 when it does not exist). */
export function newest(p) {
  let stat;
  try {
    stat = statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs;
  for (const entry of readdirSync(p)) max = Math.max(max, newest(path.join(p, entry)));
  return max;
}

/** dist/browser/ is complete and newer than every UI source. */
export function uiIsFresh() {
  if (!existsSync(stamp)) return false;
  return Math.max(...UI_SOURCES.map((p) => newest(path.join(root, p)))) <= statSync(stamp).mtimeMs;
}

/** Compiles the UI into dist/browser/ (replacing what was there). */
export function buildUi() {
  const scratch = `${UI_OUT}.${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  const require = createRequire(import.meta.url);
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', UI_PROJECT, '--outDir', scratch],
    { cwd: root, stdio: 'inherit' },
  );
  if (tsc.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`tsc (dashboard UI) failed (exit ${tsc.status ?? tsc.signal})`);
  }
  writeFileSync(path.join(scratch, '.ui-stamp'), `${new Date().toISOString()}\n`);
  rmSync(UI_OUT, { recursive: true, force: true });
  renameSync(scratch, UI_OUT);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ifNeeded = process.argv.includes('--if-needed');
  if (!(ifNeeded && uiIsFresh())) {
    try {
      buildUi();
      process.stderr.write('build: dashboard UI compiled into dist/browser/\n');
    } catch (err) {
      process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  }
}
