/**
 * `npm run bench:polling [-- --n 2000 --concurrency 64 --tasks 16 --users 4 --ms 5 --waiting --old-root <checkout>]`
 *
 * What a client polling a working task (with `--waiting`: a task waiting for input, one of its two
 * questions answered) costs, against an ordinary call (issue 23: `tasks/get` of a
 * running task at concurrency 64 should reach at least 0.8x the requests per second of an ordinary call).
 * The spec invites clients to poll `tasks/get` at the task's `pollInterval`; with thousands of tasks in
 * flight that is most of a gateway's traffic. One run on this machine: an in-memory Temporal dev server,
 * the example upstream (bench/upstream-process.ts), the gateway through the production entry point with
 * default settings (`node dist/src/main/serve.js all`), and with `--old-root` another checkout's built
 * gateway beside it (the "before" side).
 *
 * Each gateway gets `--tasks` working tasks per user (`slow_compute` for an hour); then, in alternating
 * blocks, `--n` ordinary `tools/call`s (`work {ms}`) and `--n` `tasks/get`s of those tasks (each by its
 * owner, users in turn) with `--concurrency` in flight. Prints p50/p99, requests per second, the CPU ms
 * per request of the gateway and of Temporal, the ratio to the ordinary call, and one JSON line.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { note, runBench, startTemporal, tempDir } from './env';
import type { Figures } from './measure';
import { measure } from './measure';
import type { BenchUser, GatewayProcess } from './processes';
import { benchUsers, buildIfNeeded, startGatewayProcess, startUpstreamProcess } from './processes';
import { McpHttpClient, ratio, replyProblem, table } from './support';
import { createTask } from './task-support';
import { readFlags } from './options';

const TARGET_RATE = 0.8;

function parseOptions(argv: string[]) {
  const flags = readFlags(argv, {
    n: '2000',
    concurrency: '64',
    tasks: '16',
    users: '4',
    ms: '5',
    block: '500',
    'old-root': undefined,
    waiting: false,
  });
  const { int, values } = flags;
  return {
    n: int('n', 1),
    concurrency: int('concurrency', 1),
    tasks: int('tasks', 1),
    users: int('users', 1),
    ms: int('ms', 0),
    block: int('block', 1),
    oldRoot: values['old-root'],
    waiting: values.waiting,
  };
}

/** One gateway's clients: ordinary calls from users in turn, and each user's working tasks. */
interface Target {
  ordinary: McpHttpClient;
  owners: Array<{ client: McpHttpClient; taskIds: string[] }>;
}

const FORM = { elicitation: { form: {} } };

/** A task waiting for input: `multi_input` asks two questions; the first is answered, the second stays open. */
async function waitingTask(client: McpHttpClient): Promise<string> {
  const { taskId } = await createTask(client, 'example.multi_input', {});
  for (let i = 0; ; i++) {
    const reply = await client.getTask(taskId);
    if (reply.result?.status === 'input_required') break;
    if (i > 200) throw new Error(`task ${taskId} never asked for input`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const answer = { action: 'accept', content: { name: 'one' } };
  const reply = await client.request('tasks/update', { taskId, inputResponses: { first: answer } });
  const problem = replyProblem(reply);
  if (problem !== undefined) throw new Error(problem);
  return taskId;
}

async function prepare(
  gateway: GatewayProcess,
  users: readonly BenchUser[],
  agent: Agent,
  tasksPerUser: number,
  waiting: boolean,
): Promise<Target> {
  const endpoint = `${gateway.url}/v1/mcp/bench`;
  let turn = 0;
  const ordinary = new McpHttpClient(endpoint, agent, {
    tasks: false,
    token: () => (users[turn++ % users.length] as BenchUser).token,
  });
  const owners = [];
  for (const user of users) {
    const client = new McpHttpClient(endpoint, agent, { token: user.token, capabilities: FORM });
    const taskIds: string[] = [];
    for (let i = 0; i < tasksPerUser; i++) {
      if (waiting) taskIds.push(await waitingTask(client));
      else {
        const created = await createTask(client, 'example.slow_compute', {
          seconds: 3600,
          label: `poll-${i}`,
        });
        taskIds.push(created.taskId);
      }
    }
    owners.push({ client, taskIds });
  }
  return { ordinary, owners };
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  note(`options ${JSON.stringify(opts)}`);
  buildIfNeeded();
  const temporal = await startTemporal();
  const upstream = await startUpstreamProcess('polling-upstream');
  const users = benchUsers(opts.users);
  const projects = [{ slug: 'bench', upstreams: [{ alias: 'example', url: upstream.url }] }];
  const gateway = await startGatewayProcess({ temporal, dir: tempDir(), users, projects });
  const before = opts.oldRoot
    ? await startGatewayProcess({ temporal, dir: tempDir(), users, projects, root: opts.oldRoot })
    : undefined;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const kind = opts.waiting ? 'input_required' : 'working';
  note(`creating ${opts.tasks} ${kind} tasks per user on each gateway`);
  const targets = { gateway: await prepare(gateway, users, agent, opts.tasks, opts.waiting) };
  const old = before && (await prepare(before, users, agent, opts.tasks, opts.waiting));

  type Side = 'ordinary call' | 'tasks/get working' | 'ordinary call, before' | 'tasks/get working, before';
  const sides: Side[] = ['ordinary call', 'tasks/get working'];
  if (old) sides.push('ordinary call, before', 'tasks/get working, before');
  const run = randomUUID().slice(0, 8);
  const op = async (side: Side, i: number) => {
    const target = side.endsWith('before') && old ? old : targets.gateway;
    const reply = side.startsWith('ordinary')
      ? await target.ordinary.callTool('example.work', { ms: opts.ms, nonce: `${run}-${side}-${i}` })
      : await (() => {
          const owner = target.owners[i % target.owners.length] as Target['owners'][number];
          const taskId = owner.taskIds[Math.floor(i / target.owners.length) % owner.taskIds.length] as string;
          return owner.client.getTask(taskId);
        })();
    const problem = replyProblem(reply);
    if (problem !== undefined) throw new Error(problem);
    if (side.startsWith('tasks/get') && reply.result?.status !== kind)
      throw new Error(`tasks/get: status ${String(reply.result?.status)}`);
    // The answered question is hidden, the open one shown: the answer the client must get.
    const open = Object.keys((reply.result?.inputRequests as object | undefined) ?? {});
    if (side.startsWith('tasks/get') && opts.waiting && open.join() !== 'second')
      throw new Error(`tasks/get: open input requests ${open.join() || 'none'}`);
  };
  const pids: Record<string, number> = {
    gateway: gateway.pid,
    ...(before && { 'gateway before': before.pid }),
    temporal: temporal.pid,
  };
  note('warm-up');
  await measure(sides, { n: 200, block: 200, concurrency: 8 }, pids, op);
  note(`measuring: ${opts.n} per side, ${opts.concurrency} in flight`);
  const figures: Record<Side, Figures> = await measure(
    sides,
    { n: opts.n, block: Math.max(opts.block, opts.concurrency * 4), concurrency: opts.concurrency },
    pids,
    op,
  );

  const ordinaryOf = (side: Side): Figures =>
    figures[side.endsWith('before') ? 'ordinary call, before' : 'ordinary call'];
  const cpuNames = Object.keys(pids);
  const rows = sides.map((side) => {
    const f = figures[side];
    const rate = ratio(f.perSecond, ordinaryOf(side).perSecond);
    const verdict = side.startsWith('tasks/get') ? (rate >= TARGET_RATE ? ' PASS' : ' FAIL') : '';
    return [
      side,
      f.p50,
      f.p99,
      f.perSecond,
      `${rate}${verdict}`,
      ...cpuNames.map((n) => f.cpu[n] ?? ''),
      f.errors.length,
    ];
  });
  process.stdout.write(
    [
      '',
      `bench:polling  gateway: serve all, default settings, ${opts.users} users, ${opts.tasks} ${kind} tasks ` +
        `each; node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0]?.toFixed(1)}`,
      '',
      table([
        [
          `${opts.concurrency} in flight (ms)`,
          'p50',
          'p99',
          'req/s',
          `req/s vs ordinary (target >= ${TARGET_RATE})`,
          ...cpuNames.map((n) => `CPU ms/req ${n}`),
          'errors',
        ],
        ...rows,
      ]),
      '',
      JSON.stringify({ bench: 'polling', opts, figures }),
      '',
    ].join('\n'),
  );
}

runBench(main);
