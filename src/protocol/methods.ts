/**
 * Every MCP method the gateway knows, in one table: which clients it answers it for, whether it goes
 * upstream, and what it carries. The endpoint (which methods exist, metrics labels), the gateway's
 * dispatch (its handlers are keyed by `GatewayMethod`, so a method added here without a handler does
 * not compile), the upstream client (metrics labels), the 2025 client adapter (what it forwards) and the
 * 2025 upstream translation (which answers are lists) all read their lists from here. Adding a method
 * is one row plus its handler.
 */

/** How a method reaches the gateway. */
interface MethodRow {
  /**
   * `gateway`: a 2026 request the gateway dispatches (gateway/gateway.ts); `endpoint`: a 2026 request
   * the endpoint answers itself (listen streams); `2025`: only 2025-era clients send it (the 2025 adapter
   * answers it; a 2026 request for it is -32601).
   */
  answeredBy: 'gateway' | 'endpoint' | '2025';
  /** 2025-era clients' request is forwarded into the internal model unchanged (api/mcp/legacy). */
  forwardedFor2025?: true;
  /** The gateway sends it to upstreams (its own metrics label there). */
  upstream?: true;
  /** A paginated list whose answer 2025 upstreams' translation caches. */
  list?: true;
  /** The server capability a project must have for the method to exist. */
  capability?: 'prompts' | 'resources' | 'completions';
  /** Which params field `Mcp-Name` mirrors. */
  nameField?: 'name' | 'uri' | 'taskId';
  /** May answer `input_required` in the request itself (multi-round-trip requests, 2026). */
  multiRoundTrip?: true;
}

export const MCP_METHODS = {
  'server/discover': { answeredBy: 'gateway', upstream: true },
  'tools/list': { answeredBy: 'gateway', upstream: true, list: true, forwardedFor2025: true },
  'tools/call': { answeredBy: 'gateway', upstream: true, nameField: 'name', multiRoundTrip: true },
  'tasks/get': { answeredBy: 'gateway', upstream: true, nameField: 'taskId' },
  'tasks/update': { answeredBy: 'gateway', upstream: true, nameField: 'taskId' },
  'tasks/cancel': { answeredBy: 'gateway', upstream: true, nameField: 'taskId' },
  'prompts/list': {
    answeredBy: 'gateway',
    upstream: true,
    list: true,
    capability: 'prompts',
    forwardedFor2025: true,
  },
  'prompts/get': {
    answeredBy: 'gateway',
    upstream: true,
    capability: 'prompts',
    nameField: 'name',
    multiRoundTrip: true,
    forwardedFor2025: true,
  },
  'resources/list': {
    answeredBy: 'gateway',
    upstream: true,
    list: true,
    capability: 'resources',
    forwardedFor2025: true,
  },
  'resources/templates/list': {
    answeredBy: 'gateway',
    upstream: true,
    list: true,
    capability: 'resources',
    forwardedFor2025: true,
  },
  'resources/read': {
    answeredBy: 'gateway',
    upstream: true,
    capability: 'resources',
    nameField: 'uri',
    multiRoundTrip: true,
    forwardedFor2025: true,
  },
  'completion/complete': {
    answeredBy: 'gateway',
    upstream: true,
    capability: 'completions',
    forwardedFor2025: true,
  },
  'subscriptions/listen': { answeredBy: 'endpoint', upstream: true },
  // Removed in 2026-07-28 or the 2025 task surface: 2025-era clients only.
  initialize: { answeredBy: '2025' },
  'notifications/initialized': { answeredBy: '2025' },
  ping: { answeredBy: '2025' },
  'logging/setLevel': { answeredBy: '2025' },
  'resources/subscribe': { answeredBy: '2025' },
  'resources/unsubscribe': { answeredBy: '2025' },
  'tasks/list': { answeredBy: '2025' },
  'tasks/result': { answeredBy: '2025' },
  'notifications/tasks/status': { answeredBy: '2025' },
} as const satisfies Record<string, MethodRow>;

export type McpMethod = keyof typeof MCP_METHODS;

/** The methods gateway/gateway.ts dispatches. */
export type GatewayMethod = {
  [M in McpMethod]: (typeof MCP_METHODS)[M]['answeredBy'] extends 'gateway' ? M : never;
}[McpMethod];

function rowOf(method: string): MethodRow | undefined {
  return Object.hasOwn(MCP_METHODS, method) ? (MCP_METHODS as Record<string, MethodRow>)[method] : undefined;
}

function methodsWhere(test: (row: MethodRow) => boolean): ReadonlySet<string> {
  return new Set(
    Object.entries(MCP_METHODS as Record<string, MethodRow>)
      .filter(([, row]) => test(row))
      .map(([method]) => method),
  );
}

/** Whether the gateway dispatches this method for 2026 clients. */
export function isGatewayMethod(method: string): method is GatewayMethod {
  return rowOf(method)?.answeredBy === 'gateway';
}

/** Requests removed in 2026-07-28 or of the 2025 task surface: always -32601 / 404 for a 2026 client. */
export const REMOVED_METHODS = methodsWhere((row) => row.answeredBy === '2025');
/** What a 2026 client may send: the gateway's methods and the endpoint's own. */
export const MODERN_METHODS = methodsWhere((row) => row.answeredBy !== '2025');
/** What 2025-era clients' requests the adapter forwards into the internal model unchanged. */
export const FORWARDED_FOR_2025 = methodsWhere((row) => row.forwardedFor2025 === true);
/** What the gateway sends upstream (anything else is the metrics label `other`). */
export const UPSTREAM_METHODS = methodsWhere((row) => row.upstream === true);
/** Paginated list methods. */
export const LIST_METHODS = methodsWhere((row) => row.list === true);
/** Methods that may answer `input_required` in the request itself. */
export const MULTI_ROUND_TRIP_METHODS = methodsWhere((row) => row.multiRoundTrip === true);

/** Whether a method is in the table (metrics: anything a client invents is `other`). */
export function isKnownMethod(method: string): boolean {
  return rowOf(method) !== undefined;
}

/** The server capability a method needs, if any. */
export function capabilityFor(method: string): MethodRow['capability'] {
  return rowOf(method)?.capability;
}

/** Which body field `Mcp-Name` mirrors for a method, if any. */
export function nameFieldFor(method: string): MethodRow['nameField'] {
  return rowOf(method)?.nameField;
}
