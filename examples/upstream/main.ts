/**
 * CLI: `npx tsx examples/upstream/main.ts [port]` (or PORT=…). Starts the example upstream and prints its
 * MCP endpoint URL. RESPONSE_MODE=sse switches to SSE responses; EXPOSE_STATS=1 serves `GET /stats` (the
 * calls it received, for the cluster test).
 */
import { startExampleUpstream } from './server';

async function main(): Promise<void> {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 3001);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Invalid port: ${port}`);
  const responseMode = process.env.RESPONSE_MODE === 'sse' ? 'sse' : 'json';
  const upstream = await startExampleUpstream({
    port,
    host: process.env.HOST ?? '127.0.0.1',
    responseMode,
    exposeStats: process.env.EXPOSE_STATS === '1',
  });
  console.log(`Example upstream MCP server listening on ${upstream.url} (${responseMode} responses)`);
  const stop = (): void => {
    upstream.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
