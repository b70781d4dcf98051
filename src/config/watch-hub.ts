/**
 * The `tasks.hub` section: the watch hub of each worker process, used with `tasks.watchBy: hub`
 * (docs/configuration.md; docs/decisions.md, "The watch hub").
 */
import { z } from 'zod';

export const WatchHubConfigSchema = z.strictObject({
  /** Tasks one worker's hub holds at most; at it, /readyz says degraded and other hubs take the rest. */
  maxTasks: z.int().positive().default(20_000),
  /** Upstream polls in flight at once in one hub, all upstreams together. */
  maxPolls: z.int().positive().default(256),
  /** Upstream polls in flight at once in one hub for one upstream (project and alias). */
  maxPollsPerUpstream: z.int().positive().default(32),
  /** How long a hub's claim on a task lasts unless renewed (every third of it): a dead worker's tasks are taken over after it. */
  leaseMs: z.int().min(1000).default(10_000),
  /** How often the hub looks for due tasks that no hub holds. */
  claimEveryMs: z.int().positive().default(500),
  /** Tasks claimed per statement. */
  claimBatch: z.int().positive().max(5_000).default(500),
  /**
   * How long a task's workflow waits for the hub's word before it enlists the task again: a safety
   * net only (a dead hub's tasks are taken over after `leaseMs`), so long enough that history stays
   * flat in the task's length.
   */
  reenlistAfterMs: z.int().positive().default(3_600_000),
  /**
   * A new task's workflow may take the API's row as its first enlistment instead of writing its
   * own (docs/decisions.md, "The workflow adopts the API's row"): cheaper per task. On by default since
   * the longer completion tail stop 45 measured did not come back side by side (docs/performance.md,
   * stop 46); off gives the earlier behaviour.
   */
  adoptApiEnlistment: z.boolean().default(true),
});
