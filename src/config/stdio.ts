/**
 * Local MCP servers the gateway runs itself, spoken to over stdio (docs/admin.md, "Stdio upstreams").
 * Only an operator says what may be executed: the `catalog` in this file names each command with its
 * arguments, fixed environment, working directory and limits. A project's upstream names an entry by
 * its address `stdio:<entry>?<value>=<...>` and gives only the values the entry declares `settable`
 * (each checked against its pattern, and a directory against its base); nobody else ever supplies a
 * command line.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';

const NameSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/);
const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/);

/** A value a project manager may set: where it goes, and what it may be. */
export const StdioSettableSchema = z.strictObject({
  /** A regular expression the whole value must match (anchored). */
  pattern: z.string().min(1),
  /** The value is a path that must lie inside this absolute directory (after resolving `..`). */
  under: z.string().refine(isAbsolute, 'an absolute path').optional(),
  /** Required: an upstream without it is refused. Default true. */
  required: z.boolean().default(true),
  /** Passed in this environment variable (else only through `{name}` in the arguments or `cwd`). */
  env: EnvNameSchema.optional(),
});

export const StdioCatalogEntrySchema = z.strictObject({
  command: z.string().min(1),
  /** Arguments; `{name}` is replaced by the settable value `name`. */
  args: z.array(z.string()).default([]),
  /** The process's whole environment, besides `inheritEnv`, settable values and the credential. */
  env: z.record(EnvNameSchema, z.string()).default({}),
  /** Variables copied from the gateway's own environment (e.g. PATH, HOME); nothing else of it is. */
  inheritEnv: z.array(EnvNameSchema).default([]),
  settable: z.record(NameSchema, StdioSettableSchema).default({}),
  /**
   * The upstream's credential (its project or per-user secret: the bearer token or header value it
   * would send over HTTP) is passed in this environment variable; absent: never passed.
   */
  credentialEnv: EnvNameSchema.optional(),
  /** Working directory: an absolute path, or `{name}` of a settable value; default the gateway's. */
  cwd: z.string().optional(),
  /** Applied with `prlimit` where it exists (Linux): address space in bytes, CPU time in seconds. */
  limits: z
    .strictObject({
      memoryBytes: z.int().positive().optional(),
      cpuSeconds: z.int().positive().optional(),
    })
    .prefault({}),
});
export type StdioCatalogEntry = z.infer<typeof StdioCatalogEntrySchema>;

export const StdioConfigSchema = z.strictObject({
  catalog: z.record(NameSchema, StdioCatalogEntrySchema).default({}),
  /** Processes this replica runs at most (all upstreams and users); a call needing one more is refused. */
  maxProcesses: z.int().positive().default(64),
  /** A process without a request for this long is stopped (started again on the next use). */
  idleMs: z
    .int()
    .positive()
    .default(10 * 60_000),
  /** Longest time `initialize` may take before the process is given up. */
  startTimeoutMs: z.int().positive().default(30_000),
  /** Back-off before a crashed process is started again: doubles from `restartBackoffMs` up to 30 s. */
  restartBackoffMs: z.int().min(0).default(500),
  /** Bytes of a process's stderr logged per minute at most (the rest is counted, not logged). */
  stderrBytesPerMinute: z
    .int()
    .min(0)
    .default(16 * 1024),
});
export type StdioConfig = z.infer<typeof StdioConfigSchema>;

/** What an upstream's `stdio:` address names: the entry and the values given for it. */
export interface StdioAddress {
  entry: string;
  values: Record<string, string>;
}

export const STDIO_SCHEME = 'stdio:';

export function isStdioUrl(url: string): boolean {
  return url.startsWith(STDIO_SCHEME);
}

/** A catalog reference refused: `field` names what was wrong (`url`, or `url.<value>`). */
export class StdioReferenceError extends Error {
  override readonly name = 'StdioReferenceError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Parses `stdio:<entry>?<name>=<value>&…` (no check against the catalog). */
export function parseStdioUrl(url: string): StdioAddress {
  if (!isStdioUrl(url)) throw new StdioReferenceError('url', 'not a stdio: address');
  const rest = url.slice(STDIO_SCHEME.length);
  const q = rest.indexOf('?');
  const entry = q < 0 ? rest : rest.slice(0, q);
  const values: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(q < 0 ? '' : rest.slice(q + 1))) {
    if (k in values) throw new StdioReferenceError(`url.${k}`, `value "${k}" is given twice`);
    values[k] = v;
  }
  return { entry: decodeURIComponent(entry), values };
}

/**
 * Checks an address against the catalog: a known entry, only declared values, each matching its
 * pattern (and inside its base directory), every required one given. Answers the entry and values.
 */
export function checkStdioUrl(
  catalog: Record<string, StdioCatalogEntry>,
  url: string,
): StdioAddress & { spec: StdioCatalogEntry } {
  const address = parseStdioUrl(url);
  const spec = Object.hasOwn(catalog, address.entry) ? catalog[address.entry] : undefined;
  if (!spec) {
    throw new StdioReferenceError(
      'url',
      `stdio catalog entry "${address.entry}" is not in this gateway's catalog (stdio.catalog)`,
    );
  }
  for (const [name, value] of Object.entries(address.values)) {
    const settable = Object.hasOwn(spec.settable, name) ? spec.settable[name] : undefined;
    if (!settable) {
      throw new StdioReferenceError(
        `url.${name}`,
        `stdio catalog entry "${address.entry}" has no settable value "${name}"`,
      );
    }
    if (!new RegExp(`^(?:${settable.pattern})$`, 'u').test(value)) {
      throw new StdioReferenceError(
        `url.${name}`,
        `value "${name}" does not match the pattern of catalog entry "${address.entry}"`,
      );
    }
    if (settable.under !== undefined) {
      const inside = relative(settable.under, resolve(settable.under, value));
      if (inside.startsWith('..') || isAbsolute(inside)) {
        throw new StdioReferenceError(`url.${name}`, `value "${name}" must lie inside ${settable.under}`);
      }
    }
  }
  for (const [name, settable] of Object.entries(spec.settable)) {
    if (settable.required && !(name in address.values)) {
      throw new StdioReferenceError(`url.${name}`, `catalog entry "${address.entry}" needs value "${name}"`);
    }
  }
  return { ...address, spec };
}

/**
 * The control plane's check of a `stdio:` address (its `checkStdioAddress` option): throws an Error whose
 * message starts with the field (`url`, `url.<value>`).
 */
export function stdioAddressCheck(catalog: Record<string, StdioCatalogEntry>): (url: string) => void {
  return (url) => {
    try {
      checkStdioUrl(catalog, url);
    } catch (err) {
      throw err instanceof StdioReferenceError ? new Error(`${err.field}: ${err.message}`) : err;
    }
  };
}

/** `{name}` in a template replaced by the settable value (a path value resolved inside its base). */
export function fillTemplate(template: string, address: StdioAddress, spec: StdioCatalogEntry): string {
  return template.replace(/\{([a-z0-9_-]+)\}/g, (whole, name: string) => {
    const value = address.values[name];
    if (value === undefined) return Object.hasOwn(spec.settable, name) ? '' : whole;
    const under = spec.settable[name]?.under;
    return under !== undefined ? resolve(under, value) : value;
  });
}
