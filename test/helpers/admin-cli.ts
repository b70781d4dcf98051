/**
 * `taskrouter admin ...` as a child process (`node --import tsx src/main/admin-cli.ts`), configured by a
 * file of its own through TASKROUTER_CONFIG, for the tests of the admin CLI.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.join(__dirname, '../..');

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Writes `config` to `file` and returns the CLI's environment reading it (and not the encryption keys of
 * the test process's environment, so the file's are the ones used); `extra` adds variables.
 */
export function adminCliEnv(file: string, config: unknown, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  writeFileSync(file, JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, TASKROUTER_CONFIG: file, ...extra };
  delete env['TASKROUTER_ENCRYPTION_KEYS'];
  return env;
}

/** Runs `taskrouter admin ...args` in `env`: its exit code and output (a failing command does not throw). */
export async function runAdminCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/main/admin-cli.ts', 'admin', ...args],
      { cwd: root, env },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliOutcome;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
