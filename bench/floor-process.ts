/**
 * What the platform costs before any gateway logic, as a process of its own (forked by bench/floor.ts
 * through bench/processes.ts, options as JSON in argv[2]; sends `{ type: 'ready', url, pid }`):
 *
 * - `bare-proxy`: a node:http server that hands each POST body and the MCP headers to the upstream
 *   through a keep-alive undici pool and sends the answer back; no authentication, no parsing, no
 *   routing, no logging. What any Node.js proxy in the path costs on this machine.
 * - `temporal`: POST creates a "task" the least way Temporal allows (bench/floor-workflow.ts):
 *   update-with-start from a client in the same process as the worker (like `serve all`), the upstream
 *   call as a local activity in the first workflow task, the answer from the update, the worker with
 *   the gateway's worker settings for the sandbox. What a durable creation costs with nothing of the
 *   gateway's own.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { Pool } from 'undici';
import { NO_ACTIVATION_LIMIT_MS, setWorkflowStackTraces, withActivationLimit } from '../src/temporal/worker';
import { createFloorActivities } from './floor-activities';
import { firstOutcomeUpdate } from './floor-workflow';

export type FloorOptions =
  | { mode: 'bare-proxy'; upstreamUrl: string }
  | { mode: 'temporal'; upstreamUrl: string; address: string; namespace: string };

/** The headers an MCP request carries that the upstream needs (authorization is the gateway's, not its). */
const FORWARDED = /^(content-type|accept|mcp-.*)$/i;

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function bareProxy(upstreamUrl: string): http.RequestListener {
  const url = new URL(upstreamUrl);
  const pool = new Pool(url.origin, { connections: 128 });
  return (req, res) => {
    void (async () => {
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (FORWARDED.test(k) && typeof v === 'string') headers[k] = v;
      const up = await pool.request({ method: 'POST', path: url.pathname, headers, body });
      const answer = Buffer.from(await up.body.arrayBuffer());
      res.writeHead(up.statusCode, {
        'content-type': String(up.headers['content-type'] ?? 'application/json'),
      });
      res.end(answer);
    })().catch((err: unknown) => {
      res.writeHead(502).end(err instanceof Error ? err.message : String(err));
    });
  };
}

async function temporalFloor(
  opts: Extract<FloorOptions, { mode: 'temporal' }>,
): Promise<http.RequestListener> {
  const taskQueue = `floor-${randomUUID().slice(0, 8)}`;
  const workerConnection = await NativeConnection.connect({ address: opts.address });
  const dispatcher = new Pool(new URL(opts.upstreamUrl).origin, { connections: 128 });
  // Without the per-call watchdog and the workflow stack traces, as the gateway's worker runs by default
  // (src/temporal/worker.ts).
  setWorkflowStackTraces(false);
  const worker = await Worker.create(
    withActivationLimit(NO_ACTIVATION_LIMIT_MS, {
      connection: workerConnection,
      namespace: opts.namespace,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflow') }),
      activities: createFloorActivities(opts.upstreamUrl, dispatcher),
    }),
  );
  void worker.run();
  const client = new Client({
    connection: await Connection.connect({ address: opts.address }),
    namespace: opts.namespace,
  });
  return (req, res) => {
    void (async () => {
      const args = JSON.parse((await readBody(req)).toString('utf8')) as Record<string, unknown>;
      const op = new WithStartWorkflowOperation('floorTask', {
        workflowId: `floor-${randomUUID()}`,
        taskQueue,
        args: [args],
        workflowIdConflictPolicy: 'FAIL',
      });
      const outcome = await client.workflow.executeUpdateWithStart(firstOutcomeUpdate, {
        startWorkflowOperation: op,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(outcome));
    })().catch((err: unknown) => {
      res.writeHead(500).end(err instanceof Error ? err.message : String(err));
    });
  };
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/floor-process.ts runs forked, with an IPC channel');
  const opts = JSON.parse(process.argv[2] ?? '{}') as FloorOptions;
  const listener = opts.mode === 'bare-proxy' ? bareProxy(opts.upstreamUrl) : await temporalFloor(opts);
  const server = http.createServer({ keepAliveTimeout: 30_000 }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const exit = () => process.exit(0);
  process.once('disconnect', exit);
  process.once('SIGTERM', exit);
  send({ type: 'ready', url: `http://127.0.0.1:${port}/`, pid: process.pid });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `floor process failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
