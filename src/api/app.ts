/** The gateway's HTTP application. Built without listening, so tests can mount it on any server. */
import Koa from 'koa';
import type { McpEndpointDeps } from './mcp-endpoint';
import { mcpEndpoint } from './mcp-endpoint';

const MCP_PATH = /^\/v1\/mcp\/([^/]+)\/?$/;

export function createApp(deps: McpEndpointDeps): Koa {
  const app = new Koa();
  const mcp = mcpEndpoint(deps);
  app.silent = true; // errors are logged by our own handlers, without request payloads
  app.use(async (ctx, next) => {
    const match = MCP_PATH.exec(ctx.path);
    if (match) return mcp(ctx, decodeURIComponent(match[1] as string));
    if (ctx.path === '/healthz' && ctx.method === 'GET') {
      ctx.body = { ok: true };
      return;
    }
    await next();
  });
  return app;
}
