#!/usr/bin/env node
// `taskrouter admin ...`: runs the admin CLI (TypeScript, through tsx) with this Node binary.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [command, ...rest] = process.argv.slice(2);
if (command !== 'admin') {
  process.stderr.write('usage: taskrouter admin <command> [--flag value ...]  (taskrouter admin help)\n');
  process.exit(2);
}
const cli = fileURLToPath(new URL('../src/main/admin-cli.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');
const result = spawnSync(process.execPath, ['--import', tsx, cli, ...rest], { stdio: 'inherit' });
process.exit(result.status ?? 1);
