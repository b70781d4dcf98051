/**
 * Fair shares of one API replica between tenants (`fairShare`, src/config/fair-share.ts): how many
 * requests a caller and a project may have in flight, and how many task creations, in flight and per
 * second. A request over a share is refused before any work is done for it (`RateLimited`, -31013, HTTP
 * 429, with `data.retryAfterMs`); a refusal takes nothing from any share. Pure bookkeeping in memory:
 * no I/O, a clock passed in.
 */
import type { FairShareConfig } from '../config/fair-share';
import { ProtocolError } from '../protocol';

/** Whose share a request counts against: its project, and its caller within that project. */
export interface ShareOwner {
  projectId: string;
  /** The caller within the project (`kind:id` of its principal). */
  callerId: string;
}

/** Held while the request runs; `release` gives it back (a second call does nothing). */
export interface Lease {
  release(): void;
}

/**
 * When to try again after a refusal for concurrency: nothing says when a request in flight ends, and a
 * second is short next to the slow calls that fill a share, long next to a client's busy loop.
 */
export const CONCURRENCY_RETRY_MS = 1_000;

/** After a refusal for too many open hosted tasks: these end at the pace of slow calls and people. */
const HOSTED_RETRY_MS = 10_000;

/** Counts held per key; a key at zero is forgotten, so memory follows what is in flight. */
export class InFlight {
  private readonly held = new Map<string, number>();

  count(key: string): number {
    return this.held.get(key) ?? 0;
  }

  add(key: string): void {
    this.held.set(key, this.count(key) + 1);
  }

  remove(key: string): void {
    const n = this.count(key) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
  }

  /** Keys with something held (for tests and metrics). */
  get size(): number {
    return this.held.size;
  }
}

/**
 * Token buckets per key: `capacity` tokens, refilled at `perSecond`. A bucket that has refilled to full
 * is the same as none, so such buckets are dropped when the map grows, keeping memory bounded by the keys
 * active within one refill time.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly capacity: number,
    private readonly now: () => number,
    private readonly sweepAbove = 10_000,
  ) {}

  /** Milliseconds until `key` has a token (0: it has one now). */
  waitMs(key: string): number {
    const tokens = this.tokens(key);
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / this.perSecond) * 1000);
  }

  /** Takes one token; the caller checked `waitMs` first. */
  take(key: string): void {
    this.buckets.set(key, { tokens: this.tokens(key) - 1, at: this.now() });
    if (this.buckets.size > this.sweepAbove) this.sweep();
  }

  get size(): number {
    return this.buckets.size;
  }

  private tokens(key: string): number {
    const b = this.buckets.get(key);
    if (!b) return this.capacity;
    return Math.min(this.capacity, b.tokens + ((this.now() - b.at) / 1000) * this.perSecond);
  }

  private sweep(): void {
    for (const key of [...this.buckets.keys()]) {
      if (this.tokens(key) >= this.capacity) this.buckets.delete(key);
    }
  }
}

/** The shares of one replica: admits requests and task creations, or refuses them with -31013. */
export class FairShares {
  private readonly calls = new InFlight();
  private readonly creations = new InFlight();
  private readonly callerRate: TokenBuckets;
  private readonly projectRate: TokenBuckets;

  constructor(
    private readonly config: FairShareConfig,
    now: () => number = Date.now,
  ) {
    const c = config.creations;
    this.callerRate = new TokenBuckets(c.perSecondPerCaller, c.burstPerCaller, now);
    this.projectRate = new TokenBuckets(c.perSecondPerProject, c.burstPerProject, now);
  }

  /** One request in flight for `owner`: within the caller's and the project's share, or refused. */
  admitCall(owner: ShareOwner): Lease {
    const { perCaller, perProject } = this.config.calls;
    const caller = callerKey(owner);
    if (this.calls.count(caller) >= perCaller) {
      throw refusal(
        `at most ${perCaller} requests of one caller at once`,
        'calls.perCaller',
        CONCURRENCY_RETRY_MS,
      );
    }
    if (this.calls.count(owner.projectId) >= perProject) {
      throw refusal(
        `at most ${perProject} requests of one project at once`,
        'calls.perProject',
        CONCURRENCY_RETRY_MS,
      );
    }
    return this.hold(this.calls, [caller, owner.projectId]);
  }

  /** How many open hosted tasks of a project to count at most (the bound: counting further tells nothing). */
  get openHostedPerProject(): number {
    return this.config.hosted.openPerProject;
  }

  /** A hosted task for a project that has `open` hosted tasks not yet ended: within its bound, or refused. */
  admitHostedTask(open: number): void {
    const bound = this.config.hosted.openPerProject;
    if (open >= bound) {
      throw refusal(
        `at most ${bound} hosted tasks of one project running or waiting at once`,
        'hosted.openPerProject',
        HOSTED_RETRY_MS,
      );
    }
  }

  /**
   * One task creation for `owner`, from the request until its first outcome: within the in-flight
   * shares (caller, project, replica) and the per-second ones (caller, project), or refused. Tokens are
   * taken only when every check passed.
   */
  admitCreation(owner: ShareOwner, opts: { perSecond?: boolean } = {}): Lease {
    const c = this.config.creations;
    const caller = callerKey(owner);
    if (this.creations.count(caller) >= c.inFlightPerCaller) {
      throw refusal(
        `at most ${c.inFlightPerCaller} task creations of one caller at once`,
        'creations.inFlightPerCaller',
        CONCURRENCY_RETRY_MS,
      );
    }
    if (this.creations.count(owner.projectId) >= c.inFlightPerProject) {
      throw refusal(
        `at most ${c.inFlightPerProject} task creations of one project at once`,
        'creations.inFlightPerProject',
        CONCURRENCY_RETRY_MS,
      );
    }
    if (this.creations.count(TOTAL) >= c.inFlightTotal) {
      throw refusal(
        `the gateway is creating ${c.inFlightTotal} tasks already`,
        'creations.inFlightTotal',
        CONCURRENCY_RETRY_MS,
      );
    }
    // The API's own first call (`perSecond: false`) is a creation only if the upstream answers with a
    // task: most are quick synchronous calls, which the per-second creation rates must not throttle.
    if (opts.perSecond === false) return this.hold(this.creations, [caller, owner.projectId, TOTAL]);
    const callerWait = this.callerRate.waitMs(caller);
    if (callerWait > 0) {
      throw refusal(
        `at most ${c.perSecondPerCaller} task creations per second of one caller`,
        'creations.perSecondPerCaller',
        callerWait,
      );
    }
    const projectWait = this.projectRate.waitMs(owner.projectId);
    if (projectWait > 0) {
      throw refusal(
        `at most ${c.perSecondPerProject} task creations per second of one project`,
        'creations.perSecondPerProject',
        projectWait,
      );
    }
    this.callerRate.take(caller);
    this.projectRate.take(owner.projectId);
    return this.hold(this.creations, [caller, owner.projectId, TOTAL]);
  }

  /** What is in flight now (tests, metrics). */
  inFlight(owner: ShareOwner): {
    calls: number;
    creations: number;
    projectCalls: number;
    projectCreations: number;
  } {
    const caller = callerKey(owner);
    return {
      calls: this.calls.count(caller),
      creations: this.creations.count(caller),
      projectCalls: this.calls.count(owner.projectId),
      projectCreations: this.creations.count(owner.projectId),
    };
  }

  private hold(counter: InFlight, keys: readonly string[]): Lease {
    for (const k of keys) counter.add(k);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        for (const k of keys) counter.remove(k);
      },
    };
  }
}

/** The replica-wide count's key: no project id is empty. */
const TOTAL = '';

function callerKey(owner: ShareOwner): string {
  return `${owner.projectId}/${owner.callerId}`;
}

function refusal(what: string, setting: string, retryAfterMs: number): ProtocolError {
  const wait = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ProtocolError(
    'RateLimited',
    `Too many requests: ${what}. Nothing was sent to the upstream; try again in ${wait} s`,
    {
      retryAfterMs,
      limit: `fairShare.${setting}`,
    },
  );
}
