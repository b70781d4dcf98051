#!/usr/bin/env node
// `taskrouter admin ...`: runs the compiled admin CLI (dist/, `npm run build`) with this Node binary.
// In a checkout whose dist/ is missing or older than the sources, it runs the TypeScript through tsx
// instead (a development dependency), so the command never runs stale code.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { distIsFresh } from '../scripts/build.mjs';

const [command, ...rest] = process.argv.slice(2);
if (command !== 'admin') {
  process.stderr.write('usage: taskrouter admin <command> [--flag value ...]  (taskrouter admin help)\n');
  process.exit(2);
}
const file = (p) => fileURLToPath(new URL(p, import.meta.url));
const args = distIsFresh()
  ? [file('../dist/src/main/admin-cli.js')]
  : ['--import', import.meta.resolve('tsx'), file('../src/main/admin-cli.ts')];
const result = spawnSync(process.execPath, [...args, ...rest], { stdio: 'inherit' });
process.exit(result.status ?? 1);
