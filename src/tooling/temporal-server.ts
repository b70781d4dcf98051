/**
 * The real Temporal server for the cluster test (`npm run test:cluster`), built from source at a pinned
 * version, the same version docker-compose.yml runs as images: `go install` of the server and its SQL
 * tool (`temporal-sql-tool` in the admin-tools image) into `.tools/temporal-server/bin`, and the
 * PostgreSQL schema copied from the module next to them (`schema/postgresql/v12`, laid out as in the
 * admin-tools image under /etc/temporal/schema). Nothing is rebuilt when both binaries report the
 * pinned version and the schema is there. A cold build takes about ten minutes on two cores.
 */
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Temporal server release: the images in docker-compose.yml carry the same tag. */
export const TEMPORAL_SERVER_VERSION = '1.32.2';
/** The Go toolchain the server release builds with (its go.mod asks for a newer Go than many machines have). */
export const TEMPORAL_GO_TOOLCHAIN = 'go1.27.3';

const MODULE = 'go.temporal.io/server';
const PACKAGES = { server: 'cmd/server', sqlTool: 'cmd/tools/sql' } as const;

export interface TemporalServerTools {
  /** `temporal-server` of the temporalio/server image. */
  server: string;
  /** `temporal-sql-tool` of the temporalio/admin-tools image. */
  sqlTool: string;
  /** `…/schema/postgresql/v12`, with `temporal/versioned` and `visibility/versioned` below it. */
  postgresSchemaDir: string;
}

export interface EnsureTemporalServerOptions {
  /** Where the tools live (default `<repo>/.tools/temporal-server`). */
  dir: string;
  /** Build them when missing or of another version (default true). */
  install?: boolean;
  log?: (message: string) => void;
}

export function temporalServerTools(dir: string): TemporalServerTools {
  return {
    server: path.join(dir, 'bin', 'server'),
    sqlTool: path.join(dir, 'bin', 'sql'),
    postgresSchemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}

/** The version a binary reports (`… version 1.32.2`), or undefined when it is missing or does not run. */
async function reportedVersion(binary: string): Promise<string | undefined> {
  if (!existsSync(binary)) return undefined;
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 30_000 });
    return /(\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  } catch {
    return undefined;
  }
}

async function upToDate(tools: TemporalServerTools): Promise<boolean> {
  const versions = await Promise.all([reportedVersion(tools.server), reportedVersion(tools.sqlTool)]);
  return (
    versions.every((v) => v === TEMPORAL_SERVER_VERSION) &&
    existsSync(path.join(tools.postgresSchemaDir, 'temporal', 'versioned')) &&
    existsSync(path.join(tools.postgresSchemaDir, 'visibility', 'versioned'))
  );
}

/**
 * The server, its SQL tool and the PostgreSQL schema at TEMPORAL_SERVER_VERSION, built with `go install`
 * when missing (needs `go` on PATH and the Go module proxy; GOTOOLCHAIN fetches the pinned toolchain).
 */
export async function ensureTemporalServer(opts: EnsureTemporalServerOptions): Promise<TemporalServerTools> {
  const tools = temporalServerTools(opts.dir);
  if (await upToDate(tools)) return tools;
  if (opts.install === false) {
    throw new Error(
      `Temporal server ${TEMPORAL_SERVER_VERSION} not found in ${opts.dir}: run npx tsx scripts/install-temporal-server.ts`,
    );
  }
  const log = opts.log ?? (() => undefined);
  const bin = path.join(opts.dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const env = { ...process.env, GOTOOLCHAIN: TEMPORAL_GO_TOOLCHAIN, GOBIN: bin, GOFLAGS: '-buildvcs=false' };
  const targets = Object.values(PACKAGES).map((pkg) => `${MODULE}/${pkg}@v${TEMPORAL_SERVER_VERSION}`);
  log(
    `building Temporal server ${TEMPORAL_SERVER_VERSION} with ${TEMPORAL_GO_TOOLCHAIN} into ${bin} (minutes)`,
  );
  const started = Date.now();
  try {
    await run('go', ['install', ...targets], { env, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('`go` is not on PATH: install Go to build the Temporal server');
    throw new Error(`go install failed: ${e.stderr?.trim() ?? e.message}`);
  }
  const { stdout } = await run('go', ['mod', 'download', '-json', `${MODULE}@v${TEMPORAL_SERVER_VERSION}`], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const moduleDir = (JSON.parse(stdout) as { Dir: string }).Dir;
  rmSync(path.join(opts.dir, 'schema'), { recursive: true, force: true });
  cpSync(path.join(moduleDir, 'schema', 'postgresql', 'v12'), tools.postgresSchemaDir, { recursive: true });
  makeWritable(path.join(opts.dir, 'schema'));
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  if (!(await upToDate(tools))) {
    throw new Error(
      `the Temporal server built into ${bin} does not report version ${TEMPORAL_SERVER_VERSION}`,
    );
  }
  return tools;
}

/** The module cache is read-only, and so is a copy of it: make it removable for the next upgrade. */
function makeWritable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir)) {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) makeWritable(file);
    else chmodSync(file, 0o644);
  }
}
