/**
 * The cluster test's stdio upstream (issue 26): every replica, API and worker, runs the reference memory
 * server (`@modelcontextprotocol/server-memory`, installed by the project) as a local process from the
 * operator's catalog. Ordinary calls run it on the API replica that serves them; hosted calls (its
 * read-only `open_nodes`, always a gateway task) run it on the worker that runs the task's activity.
 *
 * Each process's command line carries the run's marker, so `ps` finds exactly this run's processes: none
 * may outlive the replica that started it, kill -9 included (the gateway starts each under
 * `setpriv --pdeathsig KILL`), and none may be left once the cluster has stopped.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText, TASKS_CAPS } from '../helpers/mcp-client';
import type { Replica } from './fleet';
import { newClient } from './workload';

export const STDIO_PROJECT = 'cluster-stdio';
const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
/** The entity written once at the start; every later call reads it back (the processes share the file). */
const ENTITY = 'TaskRouter cluster';
const HOSTED_TOOL = 'open_nodes';

export interface StdioSetup {
  /** In every stdio process's command line (an argument the server ignores), and in no other process's. */
  marker: string;
  /** The gateway configuration's `stdio` section. */
  config: Record<string, unknown>;
  /** The bootstrap file's project with the stdio upstream. */
  project: Record<string, unknown>;
}

export function stdioSetup(runDir: string, node: string): StdioSetup {
  const marker = `--taskrouter-cluster-run=${path.basename(runDir)}`;
  const base = path.join(runDir, 'stdio');
  mkdirSync(base, { recursive: true });
  return {
    marker,
    config: {
      catalog: {
        memory: {
          command: node,
          args: [MEMORY, marker],
          settable: { store: { pattern: '[a-z0-9-]+\\.jsonl', under: base, env: 'MEMORY_FILE_PATH' } },
        },
      },
    },
    project: {
      slug: STDIO_PROJECT,
      team: 'ops',
      namespacing: false,
      upstreams: [
        {
          alias: 'memory',
          url: 'stdio:memory?store=graph.jsonl',
          hosting: { tools: [HOSTED_TOOL], promoteAfterMs: 0 },
        },
      ],
    },
  };
}

export interface StdioProcess {
  pid: number;
  ppid: number;
}

/** This run's stdio processes (their command line holds the marker). */
export function stdioProcesses(marker: string): StdioProcess[] {
  const out = execFileSync('ps', ['-ww', '-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out.split('\n').flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (!m || !(m[3] as string).includes(marker)) return [];
    return [{ pid: Number(m[1]), ppid: Number(m[2]) }];
  });
}

export function childrenOf(marker: string, replica: Replica): number[] {
  const pid = replica.pid;
  return pid === undefined ? [] : stdioProcesses(marker).flatMap((p) => (p.ppid === pid ? [p.pid] : []));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What the stdio part of the run saw; `findings` fail the run. */
export class StdioRecord {
  killsWithProcesses = 0;
  processesKilledWithReplica = 0;
  orphans: number[] = [];
  storm = { calls: 0, ok: 0, hosted: 0, hostedCompleted: 0, notes: [] as string[] };
  apiCalls: Record<string, number> = {};
  hostedCalm = 0;
  findings: string[] = [];

  constructor(readonly marker: string) {}

  /**
   * Around a kill -9: the replica's stdio processes (listed just before) must be gone within 5 s of it
   * (the kernel's parent-death signal, not the gateway, stops them).
   */
  async killChecked(replica: Replica): Promise<void> {
    const before = childrenOf(this.marker, replica);
    await replica.kill9();
    if (before.length === 0) return;
    this.killsWithProcesses++;
    this.processesKilledWithReplica += before.length;
    const deadline = Date.now() + 5000;
    while (before.some(alive) && Date.now() < deadline) await sleep(100);
    const left = before.filter(alive);
    if (left.length > 0) {
      this.orphans.push(...left);
      this.findings.push(`stdio processes ${left.join(', ')} outlived kill -9 of ${replica.name}`);
    }
  }
}

function client(baseUrl: string, token: string): McpTestClient {
  return newClient(baseUrl, STDIO_PROJECT, token);
}

/** The entity every process reads back, written once (retried until a replica answers). */
export async function seedGraph(proxyUrl: string, token: string): Promise<void> {
  const c = client(proxyUrl, token);
  const deadline = Date.now() + 60_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const reply = await c.callTool(
        'create_entities',
        { entities: [{ name: ENTITY, entityType: 'gateway', observations: ['runs stdio servers'] }] },
        { tasks: false },
      );
      if (reply.body.result && reply.body.result.isError !== true) return;
      last = JSON.stringify(reply.body).slice(0, 300);
    } catch (err) {
      last = String(err);
    }
    await sleep(1000);
  }
  throw new Error(`the stdio upstream's create_entities did not succeed: ${last}`);
}

/** An ordinary call (`read_graph`): the API replica behind `baseUrl` runs it in its own process. */
async function ordinaryCall(baseUrl: string, token: string): Promise<string | undefined> {
  const reply = await client(baseUrl, token).callTool('read_graph', {}, { tasks: false });
  const out = resultText(reply.body.result);
  return reply.body.result?.isError !== true && out.includes(ENTITY)
    ? undefined
    : `HTTP ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`;
}

/** A hosted call (`open_nodes`, always a task), followed to its end; undefined when it completed with the entity. */
async function hostedCall(baseUrl: string, token: string, deadline: number): Promise<string | undefined> {
  const c = client(baseUrl, token);
  const created = await c.callTool(HOSTED_TOOL, { names: [ENTITY] }, { capabilities: TASKS_CAPS });
  const taskId = created.body.result?.taskId;
  if (created.body.result?.resultType !== 'task' || typeof taskId !== 'string')
    return `not a task: ${JSON.stringify(created.body).slice(0, 300)}`;
  for (;;) {
    let result: Record<string, unknown> | undefined;
    try {
      result = (await c.getTask(taskId)).body.result;
    } catch {
      result = undefined; // a replica died under the request: ask again
    }
    const status = String(result?.status);
    if (status === 'completed')
      return resultText(result?.['result'] as Record<string, unknown>).includes(ENTITY)
        ? undefined
        : `completed without the entity: ${JSON.stringify(result).slice(0, 300)}`;
    if (status === 'failed' || status === 'cancelled')
      return `${status}: ${JSON.stringify(result).slice(0, 300)}`;
    if (Date.now() > deadline) return `still ${status} at the deadline`;
    await sleep(300);
  }
}

/**
 * While the storm runs: ordinary and hosted calls through the proxy, one at a time, so that the replicas
 * killed have stdio processes. Replicas die under these calls, so failures are counted, not findings.
 */
export async function stdioLane(
  record: StdioRecord,
  proxyUrl: string,
  token: string,
  stopped: () => boolean,
): Promise<void> {
  for (let n = 0; !stopped(); n++) {
    try {
      if (n % 3 === 2) {
        record.storm.hosted++;
        const problem = await hostedCall(proxyUrl, token, Date.now() + 60_000);
        if (problem === undefined) record.storm.hostedCompleted++;
        else if (record.storm.notes.length < 20) record.storm.notes.push(`hosted: ${problem}`);
      } else {
        record.storm.calls++;
        const problem = await ordinaryCall(proxyUrl, token);
        if (problem === undefined) record.storm.ok++;
        else if (record.storm.notes.length < 20) record.storm.notes.push(`ordinary: ${problem}`);
      }
    } catch (err) {
      if (record.storm.notes.length < 20) record.storm.notes.push(String(err));
    }
    await sleep(300);
  }
}

/**
 * Once the storm is over: an ordinary call through each API replica (its port, not the proxy) succeeds
 * and leaves a stdio process there; hosted calls complete until each worker has one; then one API and
 * one worker replica with stdio processes are killed with SIGKILL (their processes must go with them)
 * and started again, and the API replica serves a call again from a fresh process.
 */
export async function checkStdioCalm(
  record: StdioRecord,
  replicas: Replica[],
  proxyUrl: string,
  token: string,
): Promise<void> {
  const apis = replicas.filter((r) => r.port !== undefined);
  const workers = replicas.filter((r) => r.port === undefined);
  const direct = (r: Replica): string => `http://127.0.0.1:${String(r.port)}`;
  const callEach = async (): Promise<void> => {
    for (const api of apis) {
      const problem = await ordinaryCall(direct(api), token).catch((err: unknown) => String(err));
      if (problem !== undefined) record.findings.push(`ordinary call through ${api.name}: ${problem}`);
      else record.apiCalls[api.name] = (record.apiCalls[api.name] ?? 0) + 1;
      if (childrenOf(record.marker, api).length === 0)
        record.findings.push(`${api.name} served a stdio call but has no stdio process`);
    }
  };
  await callEach();

  const deadline = Date.now() + 120_000;
  const withoutProcess = (): Replica[] => workers.filter((w) => childrenOf(record.marker, w).length === 0);
  while ((record.hostedCalm < 4 || withoutProcess().length > 0) && Date.now() < deadline) {
    const problem = await hostedCall(proxyUrl, token, deadline).catch((err: unknown) => String(err));
    if (problem !== undefined) record.findings.push(`hosted call after the storm: ${problem}`);
    else record.hostedCalm++;
  }
  for (const w of withoutProcess())
    record.findings.push(`${w.name} ran no stdio process in ${record.hostedCalm} hosted calls`);

  for (const victim of [apis[0], workers[0]]) {
    if (!victim) continue;
    await record.killChecked(victim);
    await victim.start();
  }
  await callEach();
}

/** After every replica has stopped: no process of this run's stdio upstream may be left. */
export function checkNoneLeft(record: StdioRecord): void {
  const left = stdioProcesses(record.marker);
  if (left.length > 0)
    record.findings.push(
      `stdio processes left after the cluster stopped: ${left.map((p) => `${p.pid} (parent ${p.ppid})`).join(', ')}`,
    );
}
