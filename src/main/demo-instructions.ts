/** The copy-paste curl sequence `npm start` prints: create a task, poll it, read the result. */

export interface DemoEndpoints {
  gatewayUrl: string;
  project: string;
  /** The demo user's personal access token. */
  token: string;
  upstreamUrl: string;
  temporalUiUrl?: string;
  /** Prometheus metrics, on the internal health port. */
  metricsUrl?: string;
}

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' +
  '"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}';

export function curlFor(url: string, method: string, name: string, params: string): string {
  return [
    `curl -s ${url} -H "authorization: Bearer $TR_TOKEN"`,
    `  -H 'content-type: application/json' -H 'accept: application/json, text/event-stream'`,
    `  -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: ${method}' -H "mcp-name: ${name}"`,
    `  -d '{"jsonrpc":"2.0","id":1,"method":"${method}","params":{${params},${META}}}'`,
  ].join(' \\\n');
}

export function demoInstructions(e: DemoEndpoints): string {
  const url = `${e.gatewayUrl}/v1/mcp/${e.project}`;
  const create = curlFor(
    url,
    'tools/call',
    'example.slow_compute',
    '"name":"example.slow_compute","arguments":{"seconds":10,"label":"demo"}',
  );
  const get = curlFor(url, 'tasks/get', '$TASK', `"taskId":"'"$TASK"'"`);
  return `
TaskRouter is running.
  MCP endpoint (project "${e.project}"): ${url}
  Dashboard:                             ${e.gatewayUrl}/dashboard/  (sign in with the token below)
  Example upstream:                      ${e.upstreamUrl}
  Temporal Web UI:                       ${e.temporalUiUrl ?? '(headless)'}
  Metrics (Prometheus):                  ${e.metricsUrl ?? '(set health.port)'}

Create a task (the gateway answers with its own task id), as the demo user:

TR_TOKEN=${e.token}
TASK=$(${create} | sed -E 's/.*"taskId":"([^"]+)".*/\\1/'); echo "$TASK"

Poll it (status goes from "working" to "completed" after about 10 s, with the result inlined):

${get}

Watch it in the dashboard (${e.gatewayUrl}/dashboard/): sign in with the token above; the demo user is a
member of the demo project's team, so it sees every task, its timeline, and the payloads of its own tasks.

The demo user's token is kept in .data/demo-secrets.json (with the admin token for /v1/admin).
Manage teams, projects, keys and upstreams with: npm run admin -- --help

Press Ctrl+C to stop.
`;
}
