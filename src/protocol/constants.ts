/** Protocol constants for MCP core 2026-07-28 and the Tasks extension. */
import type { McpMethod } from './methods';

export const PROTOCOL_VERSION = '2026-07-28';
/** Versions this gateway serves. Anything else is answered with -32022. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [PROTOCOL_VERSION];

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** MCP Apps (SEP-1865): tools that point at an HTML view served as a `ui://` resource. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The one content type of MCP Apps views so far. */
export const UI_MIME_TYPE = 'text/html;profile=mcp-app';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** 2025-11-25 key that must not appear under 2026-07-28 Tasks. */
  legacyRelatedTask: 'io.modelcontextprotocol/related-task',
  /** Draft "Related Task IDs" (after 2026-07-28): task ids a `tools/call` relates to. */
  relatedTaskIds: 'io.modelcontextprotocol/relatedTaskIds',
} as const;

/** HTTP header names, lower-cased as Node exposes them. */
export const HEADER = {
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  paramPrefix: 'mcp-param-',
  sessionId: 'mcp-session-id',
} as const;

export const METHOD = {
  discover: 'server/discover',
  toolsList: 'tools/list',
  toolsCall: 'tools/call',
  tasksGet: 'tasks/get',
  tasksUpdate: 'tasks/update',
  tasksCancel: 'tasks/cancel',
} as const satisfies Record<string, McpMethod>;

export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export const TERMINAL_TASK_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
