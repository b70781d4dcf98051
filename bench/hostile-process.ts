/**
 * A hostile upstream as a process of its own, for `bench:neighbours` (bench/processes.ts `forkReady` forks
 * it through tsx with an IPC channel; options as JSON in argv[2]: `{ tasks?: boolean }`). Each tool is one
 * way an upstream can hurt a shared gateway:
 *
 * - `flood_progress`: answers as SSE and streams 64 KB `notifications/progress` events without end, as
 *   fast as the gateway reads them (it waits for `drain`, so what piles up is the gateway's own buffer);
 * - `huge_json {mb}`: a JSON result of `mb` megabytes, written as fast as it is read;
 * - `unterminated_sse`: one SSE event that never ends (no line end, ever);
 * - `many_meta {keys}`: a result whose `_meta` has `keys` members;
 * - `drip`: a JSON answer that sends one byte every 3 s and never finishes;
 * - `slow_task {ms}` (with `tasks`): waits `ms`, then answers with a task that stays `working`.
 *
 * Sends `{ type: 'ready', url, pid }` once listening; answers `{ type: 'stats', id }` with how many bytes
 * it wrote and how often the gateway made it wait (`drainWaits`: back-pressure reached it).
 */
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { startHostileUpstream } from '../test/helpers/hostile-upstream';

const stats = { bytesWritten: 0, drainWaits: 0, calls: 0 };

/** Writes `chunk`, waiting for `drain` when the socket is full; false once the response is gone. */
async function write(res: ServerResponse, chunk: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  stats.bytesWritten += chunk.length;
  if (res.write(chunk)) return true;
  stats.drainWaits++;
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KB64 = 'x'.repeat(64 * 1024);
const MB = 'a'.repeat(1024 * 1024);

const TOOLS = ['flood_progress', 'huge_json', 'unterminated_sse', 'many_meta', 'drip', 'slow_task'].map(
  (name) => ({ name, inputSchema: { type: 'object' } }),
);

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/hostile-process.ts runs forked, with an IPC channel');
  const opts = JSON.parse(process.argv[2] ?? '{}') as { tasks?: boolean };
  const upstream = await startHostileUpstream({
    tools: TOOLS,
    tasks: opts.tasks === true,
    onRequest(_req, res, message) {
      stats.calls++;
      const args = (message.params.arguments ?? {}) as Record<string, number>;
      const frame = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
      /** A task that is still working, as a create (`task`) or a tasks/get (`complete`) result. */
      const workingTask = (resultType: 'task' | 'complete', taskId: string) => {
        const now = new Date().toISOString();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          frame({
            resultType,
            taskId,
            status: 'working',
            createdAt: now,
            lastUpdatedAt: now,
            ttlMs: 3_600_000,
            pollIntervalMs: 5_000,
          }),
        );
      };
      const name = message.method === 'tools/call' ? String(message.params.name) : message.method;
      switch (name) {
        case 'flood_progress': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const token = (message.params._meta as Record<string, unknown> | undefined)?.progressToken ?? 1;
          void (async () => {
            for (let i = 1; ; i++) {
              const event = `event: message\ndata: ${JSON.stringify({
                jsonrpc: '2.0',
                method: 'notifications/progress',
                params: { progressToken: token, progress: i, message: KB64 },
              })}\n\n`;
              if (!(await write(res, event))) return;
            }
          })();
          return;
        }
        case 'huge_json': {
          res.writeHead(200, { 'content-type': 'application/json' });
          const head = frame({ resultType: 'complete', content: [{ type: 'text', text: '@' }] });
          const [before, after] = head.split('@') as [string, string];
          void (async () => {
            if (!(await write(res, before))) return;
            for (let i = 0; i < (args['mb'] ?? 300); i++) if (!(await write(res, MB))) return;
            if (await write(res, after)) res.end();
          })();
          return;
        }
        case 'unterminated_sse': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          void (async () => {
            if (!(await write(res, 'data: '))) return;
            for (;;) if (!(await write(res, MB))) return;
          })();
          return;
        }
        case 'many_meta': {
          const meta = Object.fromEntries(
            Array.from({ length: args['keys'] ?? 50_000 }, (_, i) => [`k${i}`, i]),
          );
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(frame({ resultType: 'complete', content: [{ type: 'text', text: 'ok' }], _meta: meta }));
          return;
        }
        case 'drip': {
          res.writeHead(200, { 'content-type': 'application/json' });
          void (async () => {
            for (const ch of frame({ resultType: 'complete', content: [] }).repeat(1000)) {
              if (!(await write(res, ch))) return;
              await sleep(3000);
            }
          })();
          return;
        }
        case 'slow_task': {
          void sleep(args['ms'] ?? 30_000).then(() => workingTask('task', randomUUID()));
          return;
        }
        case 'tasks/get': {
          workingTask('complete', String(message.params.taskId));
          return;
        }
        default:
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: message.id,
              error: { code: -32601, message: `no ${name} here` },
            }),
          );
      }
    },
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= upstream.close().finally(() => process.exit(0));
    return closing;
  };
  process.on('message', (m: { type?: string; id?: number }) => {
    if (m.type === 'close') void close();
    if (m.type === 'stats') send({ type: 'stats', id: m.id ?? 0, stats: { ...stats } });
  });
  process.once('disconnect', () => void close());
  process.once('SIGTERM', () => void close());
  send({ type: 'ready', url: upstream.url, pid: process.pid });
}

void main();
