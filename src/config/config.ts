/**
 * Configuration: one zod schema, parsed once by an entry point into a frozen object. Defaults are the
 * embedded single-process setup of `npm start`.
 */
import { ApprovalPolicySchema } from './approvals';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FairShareConfigSchema } from './fair-share';
import { OAuthConfigSchema } from './oauth';
import { StreamsConfigSchema } from './streams';
import { TemporalConfigSchema } from './temporal';
import { WatchHubConfigSchema } from './watch-hub';
import { UpstreamTrafficConfigSchema } from './upstream-traffic';
import { ConnectConfigSchema } from './connect';
import { UpstreamConfigSchema } from './upstream';
import { StdioConfigSchema } from './stdio';

export { UpstreamConfigSchema } from './upstream';
export type { UpstreamConfig } from './upstream';

/** Result cache for ordinary `tools/call`s of read-only tools (`readOnlyHint`) or allow-listed tools. */
export const CacheConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  ttlMs: z.int().positive().default(60_000),
  /** Upper bound on cached entries per project (least recently used go first). */
  maxEntries: z.int().positive().default(1000),
  /** Upper bound on the summed size of cached results per project, in bytes of JSON. */
  maxBytes: z
    .int()
    .positive()
    .default(16 * 1024 * 1024),
  /** Exposed tool names cached even without `readOnlyHint`. */
  allowTools: z.array(z.string()).default([]),
});

/** What happens to a result larger than `maxResultBytes` (JSON size), tasks envelopes excepted. */
export const LimitsConfigSchema = z.strictObject({
  maxResultBytes: z
    .int()
    .positive()
    .default(1024 * 1024),
  overflow: z.enum(['truncate', 'compact', 'error']).default('truncate'),
  /**
   * Longest a client that cannot take a task waits on one the gateway runs for it (docs/interop.md);
   * past it the answer names the task, which keeps running. Default `DEFAULT_INLINE_TASK_WAIT_MS`.
   */
  inlineTaskWaitMs: z.int().positive().optional(),
  /**
   * This project's bound on an upstream answer (bytes), below the instance's `upstreams.maxResponseBytes`
   * (the default): it may only lower it. A value above is refused when it is written; one stored before
   * the instance maximum was lowered counts as the maximum (docs/admin.md).
   */
  maxUpstreamResponseBytes: z.int().positive().optional(),
  /** This project's total deadline for an ordinary call's answer (ms), below `upstreams.callDeadlineMs`. */
  upstreamCallDeadlineMs: z.int().positive().optional(),
});

/**
 * What an MCP request body may hold (docs/gateway.md, "Request limits", has the reasons): generous for
 * real traffic, including large tool arguments, far below what blocks the event loop for long.
 */
export const DEFAULT_JSON_SHAPE = {
  maxDepth: 128,
  maxMembers: 10_000,
  maxKeys: 20_000,
  maxContainers: 100_000,
} as const;

/** Ten minutes: long enough for most tool-sized tasks, short of the proxies that cut idle streams. */
export const DEFAULT_INLINE_TASK_WAIT_MS = 10 * 60_000;

const ProjectConfigSchema = z
  .strictObject({
    slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,49}$/),
    upstreams: z.array(UpstreamConfigSchema).min(1),
    /** Expose tools and prompts as `{alias}.{name}`; off only when no two upstreams share a name. */
    namespacing: z.boolean().default(true),
    /** `required`: callers present a bearer token; `anonymous`: anyone may call (tasks bound by id alone). */
    authMode: z.enum(['required', 'anonymous']).default('required'),
    /** `tasks`: task-aware calls may take the durable task path; `standard`: every call stays synchronous. */
    toolProfile: z.enum(['tasks', 'standard']).default('tasks'),
    features: z.strictObject({ tasks: z.boolean().default(true) }).prefault({}),
    cache: CacheConfigSchema.prefault({}),
    limits: LimitsConfigSchema.prefault({}),
    /** Which calls wait for a person's approval (docs/approvals.md); omitted: none. */
    approvals: ApprovalPolicySchema.optional(),
  })
  .refine((p) => new Set(p.upstreams.map((u) => u.alias)).size === p.upstreams.length, {
    message: 'upstream aliases must be unique within a project',
    path: ['upstreams'],
  });
export type ProjectConfig = z.infer<typeof ProjectConfigSchema>;
export type CacheConfig = z.infer<typeof CacheConfigSchema>;
export type LimitsConfig = z.infer<typeof LimitsConfigSchema>;

/** A Temporal duration string of at least one second (`30s`, `15m`, `1h`, `1d`). */
const DurationSchema = z
  .string()
  .regex(/^[1-9][0-9]*(s|m|h|d)$/, 'a duration such as "30s", "15m", "1h" or "1d"');

const ConfigObject = z.strictObject({
  // `.prefault({})` parses a missing section as `{}`, so every field default below applies.
  http: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.int().min(0).max(65535).default(8080),
      /** Largest accepted request body. */
      maxBodyBytes: z.int().positive().default(4_194_304),
      /** Deepest nesting of arrays and objects accepted in an MCP request body (docs/gateway.md). */
      maxJsonDepth: z.int().positive().max(1000).default(DEFAULT_JSON_SHAPE.maxDepth),
      /**
       * Most members in one object of an MCP request body. A huge object costs its parse, its schema
       * check and its copies far more than its bytes (docs/gateway.md, "Request limits").
       */
      maxJsonMembers: z.int().positive().default(DEFAULT_JSON_SHAPE.maxMembers),
      /** Most object members in one MCP request body, all objects together (docs/gateway.md). */
      maxJsonKeys: z.int().positive().default(DEFAULT_JSON_SHAPE.maxKeys),
      /** Most objects and arrays in one MCP request body (docs/gateway.md). */
      maxJsonContainers: z.int().positive().default(DEFAULT_JSON_SHAPE.maxContainers),
      /**
       * Browser origins allowed to call the endpoint. Loopback origins are always allowed while the
       * gateway listens on loopback; requests without an Origin header (non-browser clients) are allowed.
       */
      allowedOrigins: z.array(z.string()).default([]),
      /** Host header values accepted (DNS-rebinding protection); on loopback, loopback names only. */
      allowedHosts: z.array(z.string()).default([]),
      /**
       * Trust `X-Forwarded-Proto`/`-For` from a reverse proxy in front of the gateway (TLS terminated
       * there): the dashboard's session cookie is marked `Secure` when the request came over HTTPS.
       */
      trustProxy: z.boolean().default(false),
      /**
       * Slow clients (docs/gateway.md, Transport): the whole request head must arrive within
       * `headersTimeoutMs`, the whole request (head and body) within `requestTimeoutMs`, and a kept-alive
       * connection may sit idle between requests for `keepAliveTimeoutMs` (announced in `Keep-Alive`; Node
       * closes one second later, so clients close first); past any of them the connection is closed. They bound requests only: a response may stream for as long as it needs (listen
       * streams, inline task waits).
       */
      headersTimeoutMs: z.int().positive().default(10_000),
      requestTimeoutMs: z.int().positive().default(30_000),
      keepAliveTimeoutMs: z.int().positive().default(5_000),
      /**
       * The gateway's public origin (`https://mcp.example.com`): names each project's OAuth resource (the
       * audience its access tokens must carry). Required with `oauth`.
       */
      publicBaseUrl: z
        .url({ protocol: /^https?$/ })
        .transform((u) => u.replace(/\/+$/, ''))
        .optional(),
      /** Lifetime of a 2025-era client's `Mcp-Session-Id` (docs/interop.md); it re-initializes after. */
      mcpSessionTtlMs: z
        .int()
        .positive()
        .default(24 * 3_600_000),
    })
    .refine((h) => h.headersTimeoutMs <= h.requestTimeoutMs, {
      message: 'headersTimeoutMs must not exceed requestTimeoutMs (the head is part of the request)',
      path: ['headersTimeoutMs'],
    })
    .prefault({}),
  temporal: TemporalConfigSchema.prefault({}),
  /**
   * The gateway's database: SQLite (embedded default, one file) or PostgreSQL (several gateway/worker
   * processes). `postgresUrl` wins when set.
   */
  store: z
    .strictObject({
      sqliteFile: z.string().default('.data/taskrouter.db'),
      /**
       * When a SQLite commit is flushed to disk: `normal` (at checkpoints; a commit survives a killed
       * process, not a power loss) or `full` (at each commit). docs/storage.md, "Durability".
       */
      sqliteSynchronous: z.enum(['normal', 'full']).default('normal'),
      postgresUrl: z.string().optional(),
      /**
       * Longest PostgreSQL statement, and longest wait for a pooled connection: past it the query fails
       * instead of holding its caller (docs/storage.md, "Time limits"). Migrations have none.
       */
      postgresStatementTimeoutMs: z.int().min(100).default(30_000),
    })
    .prefault({}),
  /** The instance administrator's token for `/v1/admin` (compared in constant time; never logged). */
  admin: z.strictObject({ token: z.string().min(16).optional() }).prefault({}),
  /** A declarative bootstrap file (teams, users, projects…) applied idempotently at start. */
  bootstrapFile: z.string().optional(),
  /**
   * AES-256-GCM keys (base64, 32 bytes) by key id. New data is encrypted with `activeKeyId`; older keys
   * stay for decryption until their data has passed retention.
   */
  encryption: z.strictObject({
    activeKeyId: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/),
    keys: z.record(z.string(), z.string()),
  }),
  tasks: z
    .strictObject({
      /** Bounds on the poll interval, whatever the upstream suggests. */
      minPollIntervalMs: z.int().positive().default(500),
      maxPollIntervalMs: z.int().positive().default(60_000),
      /** Longest single watch activity before the workflow takes stock (bounded activity lifetime). */
      maxWatchMs: z
        .int()
        .positive()
        .max(45 * 60_000)
        .default(300_000),
      /** Consecutive failed upstream polls tolerated before the task is failed. */
      pollFailureBudget: z.int().positive().default(30),
      /**
       * Worker path: how long the API waits for a worker to start a task before answering that it could
       * not (past it the call is never sent). API path: the plain start's deadline, and the reconciler's wait.
       */
      startTimeoutMs: z.int().positive().default(10_000),
      /** Who makes the first upstream call (docs/decisions.md, "The first call from the API"). */
      firstCallFrom: z.enum(['api', 'worker']).default('api'),
      /** How often the creation reconciler (worker role) starts recorded, unstarted tasks. */
      reconcileEveryMs: z.int().positive().default(5_000),
      /** A first call `sending` this long with no recorded answer is declared lost (never sent again). */
      firstCallLostAfterMs: z.int().positive().default(900_000),
      /**
       * What polls a running task's upstream (docs/decisions.md, "The watch hub"): `hub` (the default),
       * one loop per worker process that polls every enlisted task and signals its workflow only when
       * something changed; `activity`, one long watch activity per task (an activity slot each). Decided
       * when a task is created, for its life.
       */
      watchBy: z.enum(['activity', 'hub']).default('hub'),
      /** The watch hub of each worker process (used with `watchBy: hub`). */
      hub: WatchHubConfigSchema.prefault({}),
    })
    .prefault({}),
  /**
   * Retention (docs/retention.md): Temporal schedules purge task payloads (results, errors, input
   * requests) older than `payloadTtlMs` and task metadata and history older than `metadataTtlMs`.
   */
  retention: z
    .strictObject({
      payloadTtlMs: z
        .int()
        .positive()
        .default(24 * 3_600_000),
      metadataTtlMs: z
        .int()
        .positive()
        .default(90 * 24 * 3_600_000),
      /** Schedule intervals (Temporal duration strings, at least 1 s): `30s`, `15m`, `1h`, `1d`. */
      payloadPurgeEvery: DurationSchema.default('1h'),
      metadataPurgeEvery: DurationSchema.default('1d'),
      /** Tasks handled per purge batch (one transaction each). */
      batchSize: z.int().positive().max(10_000).default(500),
      /** Pause between two batches, to spread the database load of a large purge. */
      batchPauseMs: z.int().min(0).default(0),
    })
    .prefault({}),
  /** Bounds on traffic toward upstreams: answer size and time, pools, allowed networks. */
  upstreams: UpstreamTrafficConfigSchema.prefault({}),
  /** Local MCP servers run by the gateway over stdio: the operator's catalog (src/config/stdio.ts). */
  stdio: StdioConfigSchema.prefault({}),
  /** Per-project and per-caller shares of the process (src/config/fair-share.ts). */
  fairShare: FairShareConfigSchema.prefault({}),
  /** Bounds on the streams relayed to clients (src/config/streams.ts). */
  streams: StreamsConfigSchema.prefault({}),
  projects: z.array(ProjectConfigSchema).default([]),
  /** OAuth 2.1 / OpenID Connect sign-in for MCP clients and the dashboard (docs/oauth.md). */
  oauth: OAuthConfigSchema.optional(),
  /**
   * Legacy (before upstreams said it themselves with `auth.oauth`): every `per_user` upstream can be
   * connected with OAuth from the dashboard, as if each had `auth.oauth: {}` (docs/oauth.md).
   */
  connectUpstreams: z.boolean().default(false),
  /** The gateway as an OAuth client of upstreams' authorization servers (src/config/connect.ts). */
  connect: ConnectConfigSchema.prefault({}),
  /**
   * On SIGTERM/SIGINT, how long running HTTP requests may take to finish after the server stops
   * accepting, and then how long running activities may take before the worker cancels them.
   */
  shutdownGraceMs: z.int().min(0).default(10_000),
  /**
   * Health and metrics (docs/operators.md). `port`: the process's internal health port (none when unset),
   * serving `/healthz`, `/readyz` and `/metrics` whatever roles it runs, on `host` (loopback by default).
   * The API port serves `/healthz` and `/readyz` too, but `/metrics` (it names every project and upstream)
   * only with `metricsToken` (then required as a bearer token, on both ports) or with `publicMetrics`.
   */
  health: z
    .strictObject({
      port: z.int().min(0).max(65535).optional(),
      host: z.string().default('127.0.0.1'),
      metricsToken: z.string().min(16).optional(),
      /**
       * Serve `/metrics` on the API port without a token. Default false: the API port is the public
       * surface, and the metrics would tell anyone which projects and upstreams exist.
       */
      publicMetrics: z.boolean().default(false),
    })
    .prefault({}),
});

export const ConfigSchema = ConfigObject.superRefine((c, ctx) => {
  // A project may only lower the instance's answer bounds (the same rule the admin API applies).
  c.projects.forEach((p, i) => {
    for (const problem of projectAnswerLimitProblems(p.limits, c.upstreams))
      ctx.addIssue({
        code: 'custom',
        message: problem.message,
        path: ['projects', i, 'limits', problem.field],
      });
  });
})
  // Each project's OAuth resource (the audience its tokens must carry) is named after the public origin.
  // Taken from the request's Host header instead, a token issued for another server's resource with the
  // same path could be replayed here by sending that server's name as Host.
  .refine((c) => c.oauth === undefined || c.http.publicBaseUrl !== undefined, {
    message: "oauth needs http.publicBaseUrl (the origin that names each project's resource)",
    path: ['http', 'publicBaseUrl'],
  })
  .refine((c) => !(c.connectUpstreams || usesUpstreamOAuth(c)) || c.http.publicBaseUrl !== undefined, {
    message:
      'connecting upstreams with OAuth needs http.publicBaseUrl (the origin of the OAuth redirect URI)',
    path: ['http', 'publicBaseUrl'],
  });
export type Config = z.infer<typeof ConfigSchema>;

/** The instance bounds a project's answer limits must stay within. */
export interface AnswerLimitCeilings {
  maxResponseBytes: number;
  callDeadlineMs: number;
}

/**
 * What is wrong with a project's answer limits under the instance's bounds: each value above its
 * ceiling, with the field and the setting that caps it. Empty when they are fine.
 */
export function projectAnswerLimitProblems(
  limits: Pick<LimitsConfig, 'maxUpstreamResponseBytes' | 'upstreamCallDeadlineMs'>,
  ceilings: AnswerLimitCeilings,
): Array<{ field: 'maxUpstreamResponseBytes' | 'upstreamCallDeadlineMs'; message: string }> {
  const problems: Array<{ field: 'maxUpstreamResponseBytes' | 'upstreamCallDeadlineMs'; message: string }> =
    [];
  const bytes = limits.maxUpstreamResponseBytes;
  if (bytes !== undefined && bytes > ceilings.maxResponseBytes)
    problems.push({
      field: 'maxUpstreamResponseBytes',
      message: `limits.maxUpstreamResponseBytes (${bytes}) is above this instance's maximum of ${ceilings.maxResponseBytes} bytes (upstreams.maxResponseBytes); a project may only lower it`,
    });
  const ms = limits.upstreamCallDeadlineMs;
  if (ms !== undefined && ms > ceilings.callDeadlineMs)
    problems.push({
      field: 'upstreamCallDeadlineMs',
      message: `limits.upstreamCallDeadlineMs (${ms}) is above this instance's maximum of ${ceilings.callDeadlineMs} ms (upstreams.callDeadlineMs); a project may only lower it`,
    });
  return problems;
}

function usesUpstreamOAuth(c: z.infer<typeof ConfigObject>): boolean {
  return c.projects.some((p) => p.upstreams.some((u) => u.auth?.mode === 'per_user' && u.auth.oauth));
}
export type ConfigInput = z.input<typeof ConfigSchema>;

/** A configuration that cannot be used; the message names the file and every offending field. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** `source` (the file the input came from) goes into the error message. */
export function parseConfig(input: unknown, source?: string): Config {
  const result = ConfigSchema.safeParse(input);
  if (!result.success) {
    const where = source === undefined ? '' : ` in ${source}`;
    throw new ConfigError(`Invalid configuration${where}:\n${z.prettifyError(result.error)}`);
  }
  return Object.freeze(result.data);
}

export function loadConfigFile(path: string): ConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read the configuration file ${path}: ${messageOf(err)}`);
  }
  try {
    return JSON.parse(text) as ConfigInput;
  } catch (err) {
    throw new ConfigError(`The configuration file ${path} is not valid JSON: ${messageOf(err)}`);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
