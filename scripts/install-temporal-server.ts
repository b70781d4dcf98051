/**
 * Builds the real Temporal server and its SQL tool (TEMPORAL_SERVER_VERSION, the release docker-compose.yml
 * runs) into .tools/temporal-server with `go install`, unless they are already there, and prints their
 * paths. Needs `go` on PATH and the Go module proxy. Run with `npx tsx scripts/install-temporal-server.ts`
 * (.ci/run does; `npm run test:cluster` does it itself when needed).
 */
import path from 'node:path';
import { ensureTemporalServer } from '../src/tooling/temporal-server';

async function main(): Promise<void> {
  const dir = path.join(__dirname, '..', '.tools', 'temporal-server');
  const tools = await ensureTemporalServer({ dir, log: (msg) => console.error(msg) });
  console.log(tools.server);
  console.log(tools.sqlTool);
  console.log(tools.postgresSchemaDir);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
