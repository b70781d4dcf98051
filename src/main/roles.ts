/**
 * What the gateway's roles (api-role.ts, worker-role.ts) share, and a stopwatch for start-up phases
 * (reported in the `taskrouter started` log line; see docs/performance.md).
 */
import type { WatchHub } from '../temporal/watch-hub';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { UpstreamCatalog } from '../gateway/catalog';
import type { Implementation } from '../protocol';
import type { Cipher } from '../store/cipher';
import type { ControlPlaneStore } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';
import type { PayloadStore } from '../store/tasks/payload-store';
import type { Database } from '../store/schema';
import type { TaskStore } from '../store/tasks/task-store';
import type { Dispatcher } from 'undici';
import type { AddressPolicy } from '../upstream/address-policy';
import type { UpstreamClient } from '../upstream/client';
import type { ReadinessCheck } from '../telemetry/health';

/** Built once per process, before any role starts. */
export interface Shared {
  config: Config;
  logger: Logger;
  serverInfo: Implementation;
  cipher: Cipher;
  upstream: UpstreamClient;
  catalog: UpstreamCatalog;
  db: Kysely<Database>;
  store: TaskStore;
  payloads: PayloadStore;
  controlPlane: ControlPlaneStore;
  /** Where upstreams a project manager set may connect; told the ports this process listens on. */
  addressPolicy: AddressPolicy;
  /** A dispatcher obeying `addressPolicy`, for the OAuth requests made for such upstreams. */
  checkedVia: Dispatcher;
  /** Create the Temporal namespace and search attributes when missing (serve, against a cluster). */
  ensureNamespace: boolean;
  phases: Phases;
  /** What `/readyz` checks in this process; each role adds its own (store, Temporal, polling). */
  readiness: Record<string, ReadinessCheck>;
  /** What `/readyz` reports as degraded (still ready) when true: `watches` on a worker at its activity cap. */
  degraded: Record<string, () => boolean>;
}

/** A running role. `graceMs`: how long running work may take to finish before it is cut off. */
export interface Role {
  close(graceMs: number): Promise<void>;
  /** The worker role's watch hub (src/temporal/watch-hub.ts). */
  watchHub?: WatchHub;
}

/** The principal of everything the gateway does on its own behalf at start. */
export const ADMIN: Principal = { kind: 'admin', via: 'bootstrap' };

/** Durations of named start-up steps, in milliseconds (steps of two roles may overlap). */
export class Phases {
  private readonly durations: Record<string, number> = {};

  async time<T>(name: string, step: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await step();
    } finally {
      this.durations[name] = Math.round(performance.now() - start);
    }
  }

  /** Since process start (the same clock), for the moment a phase ends. */
  mark(name: string): void {
    this.durations[name] = Math.round(performance.now());
  }

  summary(): Record<string, number> {
    return { ...this.durations };
  }
}
