/**
 * A gateway with the people the dashboard's roles table talks about (docs/dashboard.md), and a small
 * client for the dashboard's JSON API. Shared by the API tests and the browser tests.
 *
 * Team `core`: alice and tess. Direct member of project `board`: bob. Other team: olga (no access).
 * Project `board` (team core, member bob, one API key) and project `peruser`, whose upstream takes each
 * user's own authorization (alice has one). With `hosted`, also project `hosting` (team core, member
 * bob, namespacing on): upstream `tasks` (the example upstream, which runs tasks itself) and upstream
 * `plain` (a second example upstream that does not advertise tasks, so its tools are ordinary) whose
 * `slow_compute` the gateway hosts, always as a task (docs/hosted-tasks.md).
 */
import { randomUUID } from 'node:crypto';
import type { ExampleUpstream, ExampleUpstreamOptions } from '../../examples/upstream/server';
import { startExampleUpstream } from '../../examples/upstream/server';
import { taskKeyOf } from '../../src/store/tasks/task-store';
import type { TestGateway } from './gateway';
import { startTestGateway } from './gateway';
import type { RequestOptions } from './mcp-client';

export const ADMIN_TOKEN = `admin-${randomUUID()}`;
export const TOKENS = {
  alice: 'trp_alice-dashboard-team-member-000000000',
  tess: 'trp_tess-dashboard-team-member-0000000000',
  bob: 'trp_bob-dashboard-direct-member-000000000',
  olga: 'trp_olga-dashboard-other-team-00000000000',
  key: 'trk_board-project-api-key-00000000000000000',
} as const;
export type Who = keyof typeof TOKENS;

export interface DashboardReply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON under test, checked by the assertions
  body: any;
  headers: Headers;
}

export interface DashboardFixture {
  gw: TestGateway;
  baseUrl: string;
  /** The dashboard JSON API as `who` (bearer token). */
  api(who: Who): DashboardApiClient;
  /** Starts a task on a project as `who`; returns the MCP task id and the dashboard's task ref. */
  startTask(
    who: Who,
    tool: string,
    args: Record<string, unknown>,
    opts?: RequestOptions & { project?: string },
  ): Promise<{ taskId: string; ref: string }>;
  /** Calls the admin API as the administrator. */
  admin(method: string, route: string, body?: unknown): Promise<DashboardReply>;
  close(): Promise<void>;
}

export interface DashboardApiClient {
  get(route: string): Promise<DashboardReply>;
  send(method: 'POST' | 'PUT' | 'DELETE', route: string, body?: unknown): Promise<DashboardReply>;
}

export async function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<DashboardReply> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

export async function startDashboardFixture(
  opts: { temporalUiUrl?: string; upstream?: ExampleUpstreamOptions; hosted?: boolean } = {},
): Promise<DashboardFixture> {
  let plain: ExampleUpstream | undefined;
  if (opts.hosted) plain = await startExampleUpstream({ pollIntervalMs: 100, advertiseTasks: false });
  const gw = await startTestGateway({
    ...(opts.upstream && { upstream: opts.upstream }),
    config: { admin: { token: ADMIN_TOKEN } },
    ...(opts.temporalUiUrl !== undefined && { temporalUiUrl: opts.temporalUiUrl }),
    projects: () => [],
    bootstrap: (url) => {
      return {
        users: (['alice', 'tess', 'bob', 'olga'] as const).map((handle) => ({
          handle,
          name: handle[0]?.toUpperCase() + handle.slice(1),
          tokens: [{ name: 'dashboard', token: TOKENS[handle] }],
        })),
        teams: [
          { slug: 'core', members: ['alice', 'tess'] },
          { slug: 'other', members: ['olga'] },
        ],
        projects: [
          {
            slug: 'board',
            team: 'core',
            namespacing: false,
            members: ['bob'],
            apiKeys: [{ name: 'ci', key: TOKENS.key }],
            upstreams: [{ alias: 'example', url }],
          },
          {
            slug: 'peruser',
            team: 'core',
            namespacing: false,
            members: ['bob'],
            upstreams: [{ alias: 'example', url, auth: { mode: 'per_user' } }],
          },
          ...(plain
            ? [
                {
                  slug: 'hosting',
                  team: 'core',
                  namespacing: true,
                  members: ['bob'],
                  upstreams: [
                    { alias: 'tasks', url },
                    {
                      alias: 'plain',
                      url: plain.url,
                      hosting: { tools: ['slow_compute'], promoteAfterMs: 0 },
                    },
                  ],
                },
              ]
            : []),
        ],
      };
    },
  });
  const baseUrl = gw.client.url.replace(/\/v1\/mcp\/.*$/, '');
  const fixture: DashboardFixture = {
    gw,
    baseUrl,
    api(who) {
      const headers = { authorization: `Bearer ${TOKENS[who]}` };
      return {
        get: (route) => request(`${baseUrl}${route}`, 'GET', headers),
        send: (method, route, body) => request(`${baseUrl}${route}`, method, headers, body),
      };
    },
    async startTask(who, tool, args, opts = {}) {
      const client = gw.clientFor(opts.project ?? 'board').withToken(TOKENS[who]);
      const reply = await client.callTool(tool, args, opts);
      const taskId = reply.body.result?.taskId;
      if (reply.body.result?.resultType !== 'task' || typeof taskId !== 'string') {
        throw new Error(`expected a task, got ${JSON.stringify(reply.body)}`);
      }
      return { taskId, ref: taskKeyOf(taskId) };
    },
    admin(method, route, body) {
      return request(`${baseUrl}/v1/admin${route}`, method, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);
    },
    async close() {
      await gw.close();
      await plain?.close();
    },
  };
  return fixture;
}

/** Polls the dashboard's task detail until `done` holds (or the time is up). */
export async function waitForDetail(
  client: DashboardApiClient,
  route: string,
  done: (body: DashboardReply['body']) => boolean,
  timeoutMs = 20_000,
): Promise<DashboardReply['body']> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await client.get(route);
    if (reply.status === 200 && done(reply.body)) return reply.body;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(reply.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
