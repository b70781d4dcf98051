/**
 * Fair shares between tenants (the `fairShare` section): per-project and per-caller bounds on what one
 * tenant may hold of the shared process at once, so a noisy neighbour is refused early and clearly
 * (a retryable `-31013` with a retry delay) instead of starving everyone else. Each bound counts on one
 * API replica (docs/operators.md, "Sizing fair shares"); docs/gateway.md, "Fair shares", gives the
 * reason for every default.
 */
import { z } from 'zod';

/** Requests in flight that the gateway answers for a client (every MCP method but `subscriptions/listen`). */
const CallsSchema = z.strictObject({
  /**
   * One caller's requests in flight in one project. 64: far more than an agent runs at once (a handful
   * of tool calls), enough for a backend service calling with one API key, and half of the project's
   * share, so one caller cannot take all of it.
   */
  perCaller: z.int().positive().default(64),
  /**
   * One project's requests in flight, all its callers together. 128: two callers at their full share;
   * the number of connections every project on an upstream address used to share.
   */
  perProject: z.int().positive().default(128),
});

/** Task creations: `tools/call`s on the durable task path, from the request until the first outcome. */
const CreationsSchema = z.strictObject({
  /**
   * Creations of one caller in flight. 16: half the project's, and plenty, since a creation is in flight
   * only until the upstream answers its first call, usually well under a second.
   */
  inFlightPerCaller: z.int().positive().default(16),
  /**
   * Creations of one project in flight. 32: two callers at their full share. Creations queue in Temporal
   * in order of arrival, so a project at this bound delays another project's creation by the time its 32
   * take to start (2–5 s at the 7–17 creations/s one worker manages on two cores, docs/performance.md),
   * and leaves most of `inFlightTotal` to the others.
   */
  inFlightPerProject: z.int().positive().default(32),
  /**
   * Creations in flight on this API replica, all projects together. 150: three quarters of a worker's
   * local-activity slots (`temporal.maxConcurrentLocalActivities`, 200), where every creation's first
   * upstream call runs (its workflow task holding one of `temporal.maxConcurrentWorkflowTasks` the
   * while); the rest stays for the short store writes of running tasks. Past it a creation
   * is refused at once (retryable) instead of waiting for a slot until the start deadline (`-31002`).
   */
  inFlightTotal: z.int().positive().default(150),
  /**
   * One caller's creations per second (a token bucket refilled at this rate). 20: far above an agent's
   * pace (a model call or more per tool call) and above what one worker creates (7–17/s on two cores);
   * what it stops is a client that retries or loops without pause. The in-flight shares,
   * not this rate, are what keeps one tenant's burst from delaying another's creations.
   */
  perSecondPerCaller: z.number().positive().default(20),
  /** How many creations a caller may make at once after a quiet spell (the bucket's size). 40: a fan-out. */
  burstPerCaller: z.int().positive().default(40),
  /**
   * One project's creations per second, all its callers together. 50: above what a worker creates per
   * second (7–17 on two cores; Temporal's own floor there is ~27 with 32 clients), so on one machine it
   * never stands in the way of throughput benchmarks; on a cluster it bounds a project of many callers
   * that all loop.
   */
  perSecondPerProject: z.number().positive().default(50),
  /** The project's bucket size: five callers' bursts. */
  burstPerProject: z.int().positive().default(100),
});

/** Tasks the gateway itself runs (hosted tasks, calls waiting for approval), counted in the store. */
const HostedSchema = z.strictObject({
  /**
   * One project's hosted tasks not yet ended, on all replicas together (the store counts them). A task's
   * row is written by its workflow's first step, after the count, so creations at the same moment may
   * pass it by up to `creations.inFlightPerProject` per replica. 500: far more than a team runs or
   * leaves waiting for approval at once, and a quarter of one worker's activity slots
   * (`temporal.maxConcurrentActivities`, 2,000), which each hosted call holds while it runs or waits for
   * its upstream's queue: without a bound one project could queue until every slot was its own.
   */
  openPerProject: z.int().positive().default(500),
});

export const FairShareConfigSchema = z
  .strictObject({
    calls: CallsSchema.prefault({}),
    creations: CreationsSchema.prefault({}),
    hosted: HostedSchema.prefault({}),
  })
  .refine((f) => f.creations.inFlightPerProject < f.creations.inFlightTotal, {
    message:
      'creations.inFlightPerProject must be below creations.inFlightTotal, or one project could take every creation',
    path: ['creations', 'inFlightPerProject'],
  });
export type FairShareConfig = z.infer<typeof FairShareConfigSchema>;
