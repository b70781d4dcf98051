/**
 * `npm run bench:stdio [-- --cold 8 --warm 300 --seconds 10 --processes 5 --idle-ms 4000]`
 *
 * A stdio upstream (issue 26) through the gateway, against the same server called directly over stdio by
 * the MCP TypeScript SDK's client (1.x `StdioClientTransport`). The server is the reference memory server
 * (`@modelcontextprotocol/server-memory`, installed by the project) on a store file with one entity; the
 * call is `search_nodes` with a query unique to the call (a read-only tool: the gateway would otherwise
 * answer repeats from its result cache; the bench checks that none was a cache hit). The gateway is the
 * production entry point (`node dist/src/main/serve.js all`, built first when stale) on an in-memory
 * Temporal dev server and SQLite, with `stdio.idleMs` at --idle-ms. Figures:
 *
 * - start: a call whose process is not running (spawn, `initialize`, the call: the first call after the
 *   process was stopped for being idle), median of --cold; the SDK client's connect (spawn and
 *   `initialize`) and first call, directly;
 * - warm call: p50/p99 of --warm sequential calls, gateway and direct;
 * - throughput: calls/s with 8 concurrent callers for --seconds (8 HTTP callers to one process through
 *   the gateway; 8 concurrent requests on one SDK client directly);
 * - memory: RSS of idle processes (--processes projects, one process each, 2 s after their last call;
 *   the same for processes the SDK client started).
 *
 * Prints a table, then one JSON line. Leaves no processes behind. About 2 minutes with the build (2.7
 * minutes at load 12–15 on 2 cores with 15 s of throughput).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Agent } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CACHE_META_KEY } from '../src/gateway/gateway';
import { note, onCleanup, runBench, startTemporal, tempDir } from './env';
import { benchUsers, buildIfNeeded, rssBytes, startGatewayProcess } from './processes';
import type { RpcReply } from './support';
import { McpHttpClient, percentile, replyProblem, round, sleep, table } from './support';

const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
const CONCURRENCY = 8;

interface Options {
  cold: number;
  warm: number;
  seconds: number;
  processes: number;
  idleMs: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      cold: { type: 'string', default: '8' },
      warm: { type: 'string', default: '300' },
      seconds: { type: 'string', default: '10' },
      processes: { type: 'string', default: '5' },
      'idle-ms': { type: 'string', default: '4000' },
    },
  });
  return {
    cold: Number(values.cold),
    warm: Number(values.warm),
    seconds: Number(values.seconds),
    processes: Number(values.processes),
    idleMs: Number(values['idle-ms']),
  };
}

/** Pids of this bench's stdio processes whose command line holds `tag` (an argument the server ignores). */
function pidsOf(tag: string): number[] {
  const out = execFileSync('ps', ['-ww', '-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').flatMap((line) => {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    return m && (m[2] as string).split(' ').includes(tag) ? [Number(m[1])] : [];
  });
}

let query = 0;
const nextQuery = (): string => `q${++query}-${randomBytes(3).toString('hex')}`;

/** One gateway call; throws on anything but a result that is no cache hit. */
async function gatewayCall(client: McpHttpClient, tool: string): Promise<void> {
  const reply: RpcReply = await client.callTool(tool, { query: nextQuery() });
  const problem = replyProblem(reply);
  if (problem !== undefined) throw new Error(problem);
  if ((reply.result?._meta as Record<string, unknown> | undefined)?.[CACHE_META_KEY] === 'hit')
    throw new Error('a cache hit: the call did not reach the process');
}

async function directCall(client: Client): Promise<void> {
  const result = await client.callTool({ name: 'search_nodes', arguments: { query: nextQuery() } });
  if (result.isError === true) throw new Error(JSON.stringify(result).slice(0, 200));
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function sequential(n: number, fn: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timed(fn));
  return out;
}

/** Calls/s with `CONCURRENCY` callers, each calling again as soon as it is answered, for `seconds`. */
async function throughput(seconds: number, fn: () => Promise<void>): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let calls = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await fn();
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - t0) / 1000);
}

const median = (v: number[]): number => percentile(v, 50);
const mib = (bytes: number): number => round(bytes / 1024 / 1024, 1);

async function main(): Promise<void> {
  const opts = options();
  buildIfNeeded();
  const temporal = await startTemporal();
  const dir = tempDir();
  const store = path.join(dir, 'graph.jsonl');
  writeFileSync(
    store,
    `${JSON.stringify({ type: 'entity', name: 'TaskRouter', entityType: 'gateway', observations: ['bench'] })}\n`,
  );
  const mark = `--taskrouter-bench-stdio=${randomBytes(4).toString('hex')}`;
  const tagOf = (slug: string): string => `${mark}-${slug}`;
  const [user] = benchUsers(1, 'stdio');
  if (!user) throw new Error('no user');
  const slugs = Array.from({ length: Math.max(1, opts.processes) }, (_, i) => `stdio${i}`);
  const gateway = await startGatewayProcess({
    temporal,
    dir,
    users: [user],
    projects: slugs.map((slug) => ({
      slug,
      upstreams: [{ alias: 'memory', url: `stdio:memory?tag=${slug}` }],
    })),
    sections: {
      stdio: {
        catalog: {
          memory: {
            command: process.execPath,
            args: [MEMORY, `${mark}-{tag}`],
            env: { MEMORY_FILE_PATH: store },
            settable: { tag: { pattern: 'stdio[0-9]+' } },
          },
        },
        idleMs: opts.idleMs,
      },
    },
  });
  const dispatcher = new Agent({ connections: CONCURRENCY * 2 });
  onCleanup('http agent', () => dispatcher.close());
  const clientFor = (slug: string) =>
    new McpHttpClient(`${gateway.url}/v1/mcp/${slug}`, dispatcher, { tasks: false, token: user.token });
  const main0 = clientFor(slugs[0] as string);
  const listed = await main0.request('tools/list', {});
  const tools = (listed.result?.tools ?? []) as Array<{ name: string }>;
  const tool = tools.find((t) => t.name.endsWith('search_nodes'))?.name;
  if (tool === undefined) throw new Error(`no search_nodes tool: ${JSON.stringify(listed).slice(0, 300)}`);
  const viaGateway = (): Promise<void> => gatewayCall(main0, tool);

  // Start through the gateway: wait until the idle process is stopped, then call.
  note(`cold calls (${opts.cold}, each after the process idled ${opts.idleMs} ms and stopped)`);
  const cold: number[] = [];
  const tag0 = tagOf(slugs[0] as string);
  for (let i = 0; i < opts.cold; i++) {
    const deadline = Date.now() + opts.idleMs * 3 + 5000;
    while (pidsOf(tag0).length > 0) {
      if (Date.now() > deadline) throw new Error('the idle process was not stopped');
      await sleep(50);
    }
    cold.push(await timed(viaGateway));
    if (pidsOf(tag0).length === 0) throw new Error('the cold call left no process');
  }

  note(`warm calls (${opts.warm} sequential, then ${CONCURRENCY} callers for ${opts.seconds} s)`);
  await sequential(20, viaGateway);
  const warmGateway = await sequential(opts.warm, viaGateway);
  const rpsGateway = await throughput(opts.seconds, viaGateway);

  // Idle processes started by the gateway: one per project, each called once and measured 2 s after its
  // call (half the idle time, so none has been stopped yet, however long the others took to start).
  note(`idle memory (${slugs.length} processes)`);
  const measured: Array<Promise<number[]>> = [];
  for (const slug of slugs) {
    await gatewayCall(clientFor(slug), tool);
    measured.push(sleep(2000).then(() => pidsOf(tagOf(slug)).map((pid) => rssBytes(pid))));
  }
  const perSlug = await Promise.all(measured);
  const rssGateway = perSlug.flat();
  // At least one per project (the call's scope; discovery may run in a scope of its own).
  if (perSlug.some((pids) => pids.length === 0))
    throw new Error(`a project's process was gone 2 s after its call: ${JSON.stringify(perSlug)}`);

  // Directly: the SDK client starts the same server itself.
  note('directly over stdio (SDK client)');
  const connect = async (tag: string): Promise<{ client: Client; pid: number; ms: number }> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MEMORY, tag],
      env: { MEMORY_FILE_PATH: store },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'taskrouter-bench', version: '1.0.0' });
    const t = performance.now();
    await client.connect(transport);
    await directCall(client);
    const ms = performance.now() - t;
    onCleanup('sdk client', () => client.close());
    return { client, pid: transport.pid ?? 0, ms };
  };
  const direct: Array<{ client: Client; pid: number; ms: number }> = [];
  for (let i = 0; i < Math.max(opts.cold, slugs.length); i++)
    direct.push(await connect(`${mark}-direct${i}`));
  const first = direct[0] as { client: Client };
  const viaSdk = (): Promise<void> => directCall(first.client);
  await sequential(20, viaSdk);
  const warmDirect = await sequential(opts.warm, viaSdk);
  const rpsDirect = await throughput(opts.seconds, viaSdk);
  await sleep(2000);
  const rssDirect = direct.slice(0, slugs.length).map((d) => rssBytes(d.pid));
  for (const d of direct) await d.client.close();

  const log = gateway.log();
  const rows: Array<Array<string | number>> = [
    ['', 'gateway', 'direct (SDK)'],
    [
      'start: first call incl. spawn, ms (median)',
      round(median(cold)),
      round(median(direct.map((d) => d.ms))),
    ],
    ['warm call p50, ms', round(median(warmGateway), 2), round(median(warmDirect), 2)],
    ['warm call p99, ms', round(percentile(warmGateway, 99), 2), round(percentile(warmDirect, 99), 2)],
    [`calls/s, ${CONCURRENCY} concurrent callers`, round(rpsGateway), round(rpsDirect)],
    ['RSS per idle process, MiB (median)', mib(median(rssGateway)), mib(median(rssDirect))],
  ];
  process.stdout.write(`\n${table(rows)}\n\n`);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'stdio',
      server: '@modelcontextprotocol/server-memory search_nodes',
      node: process.version,
      cold: { gatewayMs: cold.map((v) => round(v)), directMs: direct.map((d) => round(d.ms)) },
      warmP50Ms: { gateway: round(median(warmGateway), 2), direct: round(median(warmDirect), 2) },
      warmP99Ms: {
        gateway: round(percentile(warmGateway, 99), 2),
        direct: round(percentile(warmDirect, 99), 2),
      },
      callsPerSecond8: { gateway: round(rpsGateway), direct: round(rpsDirect) },
      idleRssMiB: { gateway: rssGateway.map(mib), direct: rssDirect.map(mib) },
      gatewayLog: { warnings: log.warnings, errors: log.errors },
    })}\n`,
  );
}

runBench(main);
