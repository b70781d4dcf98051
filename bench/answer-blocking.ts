/**
 * `npm run bench:answers [-- --mib 16 --rounds 3]`
 *
 * How long one large upstream answer blocks the gateway's event loop (docs/performance.md, "Large
 * upstream answers"). An upstream in a child process of its own answers `tools/call` with a chosen shape;
 * this process runs what the gateway runs for an ordinary call (the upstream client, the gateway's meta
 * and the project's response limit, 1 MiB `truncate`, unless the answer came back prepared from a worker
 * thread, then the reply's JSON) and records, per answer, the longest stretch the event loop was busy:
 * on Node 23.9+ as the main thread's own CPU time between two 1 ms timer ticks
 * (`process.threadCpuUsage`, unaffected by other processes taking the CPU, so run it with
 * `.tools/node24/…/node`, see scripts/install-node.sh), else as the longest event-loop delay
 * (`perf_hooks.monitorEventLoopDelay`, which a busy machine inflates); with the main thread's CPU time
 * per answer, the wall time and the RSS growth. Shapes: one text block (a JSON body, and the same as one
 * SSE event: `sse-text`), rows of structured content with their text copy, a 50,000-key `_meta`, 1 MiB of
 * small objects whose keys are all different, and a 1 KiB answer (`SHAPES=text,names` picks). Run it on another
 * tree (e.g. the commit before the bounds) to compare: it uses only the upstream client's `send` and the
 * response-limit functions, and ignores what that tree does not know.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { applyResponseLimits } from '../src/gateway/responses/response-limits';
import { withGatewayMeta } from '../src/gateway/responses/responses';
import { META, PROTOCOL_VERSION } from '../src/protocol';
import { UpstreamClient } from '../src/upstream/client';

const MiB = 1024 * 1024;
const SERVER_INFO = { name: 'taskrouter-bench', version: '1' };
const LIMITS = { maxResultBytes: MiB, overflow: 'truncate' as const };

/** The answer's result for a shape, about `bytes` long (JSON). */
function resultOf(shape: string, bytes: number): Record<string, unknown> {
  switch (shape) {
    case 'text':
      return { resultType: 'complete', content: [{ type: 'text', text: 'x'.repeat(bytes - 200) }] };
    case 'structured': {
      const rows = Array.from({ length: Math.floor(bytes / 2 / 60) }, (_, i) => ({
        id: i,
        name: `row-${i}`,
        value: i * 3.5,
      }));
      return {
        resultType: 'complete',
        structuredContent: { rows },
        content: [{ type: 'text', text: JSON.stringify({ rows }) }],
      };
    }
    case 'meta50k':
      return {
        resultType: 'complete',
        content: [{ type: 'text', text: 'ok' }],
        _meta: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`vendor.example/k${i}`, i])),
      };
    case 'names': {
      // Small objects whose keys are all different: every object is a new shape to the VM.
      const objs = Array.from({ length: Math.floor(MiB / 40) }, (_, i) => ({
        [`a${i}`]: 1,
        [`b${i}`]: 2,
        [`c${i}`]: 3,
      }));
      return { resultType: 'complete', structuredContent: { objs }, content: [{ type: 'text', text: 'ok' }] };
    }
    default:
      return { resultType: 'complete', content: [{ type: 'text', text: 'y'.repeat(1000) }] };
  }
}

/** The child: an upstream answering `tools/call` `{ shape, bytes }` with that answer (built once). */
function runUpstream(): void {
  const built = new Map<string, string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: string;
        method: string;
        params: { arguments?: { shape: string; bytes: number } };
      };
      let result: string;
      if (msg.method === 'server/discover') {
        result = JSON.stringify({
          resultType: 'complete',
          supportedVersions: [PROTOCOL_VERSION],
          capabilities: { tools: {} },
          ttlMs: 60_000,
          cacheScope: 'public',
        });
      } else {
        const { shape, bytes } = msg.params.arguments ?? { shape: 'small', bytes: 1000 };
        const key = `${shape}:${bytes}`;
        if (!built.has(key)) built.set(key, JSON.stringify(resultOf(shape.replace(/^sse-/, ''), bytes)));
        result = built.get(key) as string;
        if (shape.startsWith('sse-')) {
          // The same answer as one SSE event, the way SDK servers answer by default.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(
            `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}\n\n`,
          );
          return;
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${result}}`);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
  // The bench process went away (however it ended): so does its upstream.
  process.once('disconnect', () => process.exit(0));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { mib: { type: 'string', default: '16' }, rounds: { type: 'string', default: '3' } },
  });
  const bytes = Math.floor(Number(values.mib) * MiB) - 4096;
  const rounds = Number(values.rounds);
  const child: ChildProcess = fork(__filename, ['--upstream'], { execArgv: ['--import', 'tsx'] });
  process.once('exit', () => child.kill());
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m: { port: number }) => resolve(m.port)),
  );
  const client = new UpstreamClient({
    // Trees without these options ignore them (and parse everything on the event loop).
    answerThreadScript: threadScript(),
    answerLimits: { maxResponseBytes: Math.max(16 * MiB, bytes + 8192) },
  } as never);
  const endpoint = { alias: 'bench', url: `http://127.0.0.1:${port}/mcp` };
  const prepare = {
    kind: 'tool-result',
    limits: LIMITS,
    serverInfo: SERVER_INFO,
  };
  const call = async (shape: string) => {
    const reply = await client.send(
      endpoint,
      'tools/call',
      {
        name: 'answer',
        arguments: { shape, bytes },
        _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} },
      },
      { prepare } as never,
    );
    if (reply.kind !== 'result') return JSON.stringify(reply);
    const result = (reply as { prepared?: boolean }).prepared
      ? reply.result
      : applyResponseLimits(withGatewayMeta(reply.result, SERVER_INFO), LIMITS).result;
    return JSON.stringify({ jsonrpc: '2.0', id: 1, result });
  };
  // Warm up: threads started, code compiled, every answer built by the upstream once.
  const shapes = (process.env['SHAPES'] ?? 'small,text,sse-text,structured,meta50k,names').split(',');
  for (const shape of shapes) await call(shape).catch(() => '');

  const monitor = blockMonitor();
  const rows: string[] = [];
  for (const shape of shapes) {
    const block: number[] = [];
    const cpu: number[] = [];
    const wall: number[] = [];
    let outcome = '';
    let rssGrowth = 0;
    for (let i = 0; i < rounds; i++) {
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      await monitor.start();
      const started = performance.now();
      try {
        outcome = `${((await call(shape)).length / MiB).toFixed(2)} MiB reply`;
      } catch (err) {
        outcome = (err as Error).name;
      }
      wall.push(performance.now() - started);
      const measured = await monitor.stop();
      block.push(measured.longestMs);
      cpu.push(measured.cpuMs);
      rssGrowth = Math.max(rssGrowth, process.memoryUsage().rss - rssBefore);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const fmt = (x: number) => x.toFixed(1).padStart(7);
    rows.push(
      `${shape.padEnd(11)} longest busy stretch ${fmt(median(block))} ms (max ${fmt(Math.max(...block))})   main-thread CPU ${fmt(median(cpu))} ms   wall ${fmt(median(wall))} ms   RSS +${(rssGrowth / MiB).toFixed(0).padStart(4)} MiB   ${outcome}`,
    );
  }
  process.stdout.write(
    `answers of ~${values.mib} MiB, ${rounds} rounds (medians), Node ${process.version}, measured by ${monitor.kind}\n`,
  );
  for (const r of rows) process.stdout.write(`${r}\n`);
  await client.close();
  child.kill();
}

/** The gateway's answer-thread script, where this tree has one. */
function threadScript(): string | undefined {
  try {
    return require.resolve(path.join(__dirname, '../src/gateway/responses/answer-thread'));
  } catch {
    return undefined;
  }
}

type CpuUsage = () => { user: number; system: number };

/**
 * The longest busy stretch of the event loop while it is started: main-thread CPU between two 1 ms ticks
 * when the runtime can tell a thread's CPU time, else the longest delay of a 1 ms timer.
 */
function blockMonitor() {
  const threadCpu = (process as unknown as { threadCpuUsage?: CpuUsage }).threadCpuUsage?.bind(process);
  const cpuMs = (u: { user: number; system: number }) => (u.user + u.system) / 1000;
  const settle = () => new Promise((r) => setTimeout(r, 20));
  if (!threadCpu) {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    return {
      kind: 'the longest event-loop delay (wall clock; main-thread CPU not available: 0)',
      async start() {
        await settle();
        histogram.reset();
        histogram.enable();
      },
      async stop() {
        await settle();
        histogram.disable();
        return { longestMs: histogram.max / 1e6, cpuMs: 0 };
      },
    };
  }
  let timer: NodeJS.Timeout | undefined;
  let first = 0;
  let last = 0;
  let longest = 0;
  return {
    kind: 'main-thread CPU time between 1 ms ticks (process.threadCpuUsage)',
    async start() {
      await settle();
      first = last = cpuMs(threadCpu());
      longest = 0;
      timer = setInterval(() => {
        const now = cpuMs(threadCpu());
        longest = Math.max(longest, now - last);
        last = now;
      }, 1);
    },
    async stop() {
      await settle();
      clearInterval(timer);
      return { longestMs: longest, cpuMs: cpuMs(threadCpu()) - first };
    },
  };
}

if (process.argv.includes('--upstream')) runUpstream();
else
  main().catch((err: unknown) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
