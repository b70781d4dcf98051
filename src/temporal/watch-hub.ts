/**
 * The watch hub (issue 23; docs/decisions.md, "The watch hub"): one loop per worker process that polls
 * the upstream tasks whose workflows enlisted them (`tasks.watchBy: hub`, src/workflows/hub-watch.ts),
 * in place of one watch activity per task.
 *
 * - Claims due rows no hub holds, in batches, with a lease (store/tasks/watch-hub.ts); renews all its
 *   leases in one statement every third of the lease, and forgets a row it no longer holds (the workflow
 *   enlisted it again, or another hub took it after a missed renewal). A dead worker's leases expire and
 *   another hub claims its rows: no poll is lost for longer than the lease.
 * - Polls each task at its interval from memory (no store write per poll), with the watch activity's
 *   own poll step (src/activities/watch-poll.ts), at most `maxPolls` at once and `maxPollsPerUpstream`
 *   per upstream, taking due tasks round-robin across upstreams so one busy upstream does not starve
 *   the others, and within an upstream the longest overdue first (a queue per upstream ordered by when
 *   each task is due). A poll that ends starts the next due one at once: the polls an upstream gets are
 *   bounded by its cap and its answers' speed, not by the dispatch tick. A poll that found a change gives
 *   its upstream's slot back before it signals the workflow (Temporal's time, not the upstream's).
 * - Polls that fall behind (an upstream slow to answer, the hub at its poll caps) are not silent: the
 *   most overdue task per upstream is the watch lag, and a task more than two poll intervals late is
 *   marked due in the store (tasks/get then says since when its status is unchecked) until it is polled.
 * - On a change, stores it (as the activity does), signals the workflow with the enlistment's generation,
 *   then removes the row (if still that generation; a workflow that is gone too), and the workflow enlists
 *   again after applying it; the API's enlistment of a new task is polled on while it stays `working`.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import os from 'node:os';
import type { Logger } from 'pino';
import type { WatchPoll } from '../activities/watch-poll';
import type { WatchUpstreamTaskResult } from '../activities/types';
import type { WatchHubStore } from '../store/tasks/watch-hub';
import { errorText } from '../telemetry/log-context';
import { withTraceCarrier } from '../telemetry/mcp-spans';
import { watchHubFailures, watchHubTasks } from '../telemetry/metrics';
import { WarnThrottle } from '../telemetry/warn-throttle';
import type { WatchObserved } from '../workflows/messages';
import { CREATED_ENLISTMENT } from '../workflows/messages';
import type { HeldWatch as Held } from './watch-hub-queues';
import { DueQueues, heldOf, lateness, pollLate, pollOnAfter, retryAfterFailure } from './watch-hub-queues';

export interface WatchHubSettings {
  maxTasks: number;
  maxPolls: number;
  maxPollsPerUpstream: number;
  leaseMs: number;
  claimEveryMs: number;
  claimBatch: number;
  retryMs?: number; // a task's first retry after its round failed (store write, signal); default RETRY_MS
}

export interface WatchHubDeps {
  store: WatchHubStore;
  poll: Pick<WatchPoll, 'startCursor' | 'pollOnce'>;
  /** Signals the task's workflow; `gone` when it no longer exists (or has closed). */
  signal(workflowId: string, observed: WatchObserved): Promise<'sent' | 'gone'>;
  settings: WatchHubSettings;
  logger: Logger;
  /** This hub's lease owner; default: host, pid and a random suffix (unique per hub instance). */
  owner?: string;
}

/** A lease owner unique to one hub instance (host, pid, random). */
function newOwner(): string {
  return `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

const DISPATCH_EVERY_MS = 100; // how often due tasks are looked for in memory
const RETRY_MS = 1000; // a failed signal or store write waits this, doubling with each failure in a row
const NUDGE_GATHER_MS = 20; // enlistments nudged within this are claimed by one statement
const MARK_BATCH = 500; // late tasks marked due per statement

export class WatchHub {
  private ownerId: string;
  private readonly held = new Map<string, Held>();
  /** Per upstream, its held tasks waiting for their next poll, soonest due first. */
  private readonly due = new DueQueues<Held>((h) => this.held.get(h.row.taskKey) === h && !h.polling);
  private readonly pollsByGroup = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  /** The pending timer of each periodic round (claim, renew, dispatch), replaced as each round is set. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private polls = 0;
  private turn = 0;
  private lastRenewed = Date.now();
  /** When a claim round last looked for rows of dead hubs too (see WatchHubStore.claim). */
  private orphansCheckedAt = 0;
  private stopped = false;
  /** The claim round running (one at a time); renew leaves the rows it is taking in be. */
  private claiming: Promise<void> | undefined;
  /** Another round is wanted when the running one ends (a nudge came during it). */
  private claimAgain = false;
  private nudged = false;
  private readonly failureLog: WarnThrottle; // an outage fails every task held: one warning per upstream and 10 s

  constructor(private readonly deps: WatchHubDeps) {
    this.ownerId = deps.owner ?? newOwner();
    this.failureLog = new WarnThrottle(deps.logger);
    // Every poll in flight (up to maxPolls) listens on this one signal while its request runs.
    setMaxListeners(0, this.abort.signal);
  }

  /** This hub's lease owner (a new one after it dropped what it held: see dispatch). */
  get owner(): string {
    return this.ownerId;
  }

  /** Tasks this hub holds now. */
  get size(): number {
    return this.held.size;
  }

  /** Holding `maxTasks`: due tasks beyond them wait for another hub (and /readyz says degraded). */
  get atCap(): boolean {
    return this.held.size >= this.deps.settings.maxTasks;
  }

  /** Some upstream's most overdue task is late enough to be marked stale: this hub is behind. */
  get behind(): boolean {
    const now = Date.now();
    return this.due.oldest().some((h) => pollLate(h, now));
  }

  start(): void {
    const { claimEveryMs, leaseMs } = this.deps.settings;
    this.every('claim', claimEveryMs, () => this.claim());
    this.every('renew', Math.max(100, Math.floor(leaseMs / 3)), () => this.renew());
    const dispatch = setInterval(() => this.dispatch(), DISPATCH_EVERY_MS);
    dispatch.unref();
    this.timers.set('dispatch', dispatch);
  }

  /**
   * Stops polling. `release` (a clean shutdown) gives the held rows back, due at once, so another hub
   * takes them without waiting for the leases to expire; without it they expire (as after a crash).
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.abort.abort();
    await Promise.allSettled([...this.running]);
    if (opts.release ?? true) {
      await this.deps.store
        .release(this.owner)
        .catch((err: unknown) => this.deps.logger.warn({ err: errorText(err) }, 'watch hub release failed'));
    }
    this.held.clear();
    this.due.clear();
    watchHubTasks.set(0);
  }

  /** Runs `work` every `ms` (never two at once), logging failures; one pending timer per `name`. */
  private every(name: string, ms: number, work: () => Promise<void>): void {
    const next = () => {
      if (this.stopped) return;
      const t = setTimeout(() => {
        this.track(
          work()
            .catch((err: unknown) => this.deps.logger.warn({ err: errorText(err) }, 'watch hub round failed'))
            .finally(next),
        );
      }, ms);
      t.unref();
      this.timers.set(name, t);
    };
    next();
  }

  private track(p: Promise<void>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /**
   * A task was enlisted in this process (its workflow runs here): claim within a few milliseconds
   * instead of at the next round, so a new or re-enlisted task is polled at once. Nudges that come
   * together share one claim statement; every hub's periodic round still claims what any worker enlisted.
   */
  nudge(): void {
    if (this.stopped || this.nudged) return;
    this.nudged = true;
    const t = setTimeout(() => {
      this.nudged = false;
      this.track(
        this.claim().catch((err: unknown) =>
          this.deps.logger.warn({ err: errorText(err) }, 'watch hub round failed'),
        ),
      );
    }, NUDGE_GATHER_MS);
    t.unref();
  }

  /** Claims due rows; a round asked for while one runs runs once after it (never two at once). */
  async claim(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      do {
        this.claimAgain = false;
        await this.claimRound();
      } while (this.claimAgain && !this.stopped);
    })().finally(() => (this.claiming = undefined));
    return this.claiming;
  }

  private async claimRound(): Promise<void> {
    const { maxTasks, claimBatch, leaseMs } = this.deps.settings;
    const room = Math.min(claimBatch, maxTasks - this.held.size);
    if (room <= 0 || this.stopped) return;
    // Rows of a dead hub are free once its lease ran out: looked for every third of a lease, so they
    // are taken over within about a lease and a third; other rounds read only unleased rows.
    const orphans = Date.now() - this.orphansCheckedAt >= leaseMs / 3;
    const rows = await this.deps.store.claim(this.owner, leaseMs, room, { orphans });
    const now = Date.now();
    if (orphans) this.orphansCheckedAt = now;
    for (const row of rows) {
      const h = heldOf(row, now);
      this.held.set(row.taskKey, h);
      this.due.push(h);
    }
    watchHubTasks.set(this.held.size);
    if (rows.length > 0) this.dispatch();
  }

  /**
   * How late the most overdue held task of each upstream is (ms; 0 when none is): polls that fall behind
   * (an upstream slow to answer, a hub at its poll caps) show as watch lag instead of going unseen.
   */
  overdue(now = Date.now()): Array<{ project: string; upstream: string; lateMs: number }> {
    return this.due.oldest().map((h) => ({
      project: h.row.project,
      upstream: h.row.upstream,
      lateMs: Math.max(0, now - h.nextAt),
    }));
  }

  /**
   * Marks the held tasks whose polls run late as due in the store (since their poll was due), and clears
   * the mark of those polled since: what tasks/get reads to say a status is unchecked. Nothing is written
   * while the hub keeps up.
   */
  private async markLate(): Promise<void> {
    const { late, caughtUp } = lateness(this.held.values(), Date.now());
    if (caughtUp.length > 0) {
      await this.deps.store.clearDue(caughtUp.map((h) => h.row.taskKey));
      for (const h of caughtUp) h.markedLate = false;
    }
    if (late.length === 0) return;
    // Oldest first, in batches each marked with its newest due time (never more overdue than it is).
    late.sort((a, b) => a.nextAt - b.nextAt);
    for (let i = 0; i < late.length; i += MARK_BATCH) {
      const batch = late.slice(i, i + MARK_BATCH);
      const at = new Date(batch[batch.length - 1]!.nextAt).toISOString();
      const keys = batch.map((h) => h.row.taskKey);
      await this.deps.store.markDue(keys, at, this.owner);
      for (const h of batch) h.markedLate = true;
    }
  }

  async renew(): Promise<void> {
    // Holding nothing, it has no lease to extend (dispatch's new owner leaves none behind).
    if (this.held.size === 0) {
      this.lastRenewed = Date.now();
      return;
    }
    const owner = this.owner;
    // Rows a claim round adds while the renewal reads (which may not see them) are not its to drop.
    const before = new Set(this.held.values());
    const still = await this.deps.store.renew(owner, this.deps.settings.leaseMs);
    this.lastRenewed = Date.now();
    const current = new Set(still.map((r) => `${r.taskKey}\u0000${r.generation}`));
    for (const [key, h] of this.held) {
      // Enlisted again (a new generation, unheld) or gone: no longer this hub's to poll.
      if (!before.has(h)) continue;
      if (!current.has(`${key}\u0000${h.row.generation}`)) this.held.delete(key);
    }
    watchHubTasks.set(this.held.size);
    await this.markLate();
    // A row leased to this hub that it does not hold (a claim whose statement leased rows but failed
    // after) would be renewed and never polled: given back, due now, for any hub to claim. So a lease
    // this hub renews is always a task it polls, and no task waits on its workflow's re-enlistment.
    if (this.claiming) return;
    const strays = still.filter((r) => this.held.get(r.taskKey)?.row.generation !== r.generation);
    if (strays.length > 0) await this.deps.store.release(owner, [...new Set(strays.map((r) => r.taskKey))]);
  }

  /** Starts the polls that are due, within the caps, taking one per upstream in turn. */
  private dispatch(): void {
    if (this.stopped) return;
    // Leases not renewed for a whole lease may belong to another hub by now: stop polling them, and
    // go on as another owner, so the next renewal cannot extend the leases of rows nobody here polls
    // any more; they expire and any hub (this one too) claims them again.
    if (Date.now() - this.lastRenewed > this.deps.settings.leaseMs) {
      const dropped = { tasks: this.held.size, sinceRenewedMs: Date.now() - this.lastRenewed };
      this.deps.logger.warn(
        dropped,
        'watch hub dropped the tasks it held: its leases were not renewed in time',
      );
      this.held.clear();
      this.due.clear();
      watchHubTasks.set(0);
      this.ownerId = newOwner();
      this.lastRenewed = Date.now();
      return;
    }
    const { maxPolls, maxPollsPerUpstream } = this.deps.settings;
    if (this.polls >= maxPolls) return;
    const now = Date.now();
    const groups = this.due.groups();
    if (groups.length === 0) return;
    this.turn = (this.turn + 1) % groups.length;
    for (let progress = true; progress && this.polls < maxPolls;) {
      progress = false;
      for (let i = 0; i < groups.length && this.polls < maxPolls; i++) {
        const group = groups[(this.turn + i) % groups.length]!;
        if ((this.pollsByGroup.get(group) ?? 0) >= maxPollsPerUpstream) continue;
        const h = this.due.take(group, now);
        if (!h) continue;
        // The poll and the signal continue the task's trace (saved when the workflow enlisted it).
        this.track(withTraceCarrier(h.trace, () => this.run(h)));
        progress = true;
      }
    }
  }

  private async run(h: Held): Promise<void> {
    h.polling = true;
    this.polls++;
    this.pollsByGroup.set(h.group, (this.pollsByGroup.get(h.group) ?? 0) + 1);
    let upstreamSlot = true;
    const freeUpstreamSlot = () => {
      if (upstreamSlot) this.leaveGroup(h.group);
      upstreamSlot = false;
    };
    try {
      if (!h.outcome) {
        h.cursor ??= await this.deps.poll.startCursor(h.input);
        const step = await this.deps.poll.pollOnce(h.input, h.cursor, this.abort.signal);
        if ('againMs' in step) {
          h.failures = undefined;
          if (!step.failed) h.intervalMs = step.againMs;
          h.nextAt = Date.now() + step.againMs;
          return;
        }
        h.outcome = step.done;
      }
      // The signal and the row's removal take Temporal's and the store's time, not the upstream's: its
      // slot polls the next due task meanwhile (in a wave of ends the others fell behind waiting).
      freeUpstreamSlot();
      this.dispatch();
      await this.deliver(h, h.outcome);
      h.failures = undefined;
    } catch (err) {
      if (this.abort.signal.aborted) return;
      const labels = { project: h.input.projectSlug ?? 'unknown', upstream: h.row.upstream }; // a slug, not the id
      watchHubFailures.inc(labels);
      this.failureLog.warn(h.group, { err: errorText(err), ...labels }, 'watch hub poll failed');
      retryAfterFailure(h, this.deps.settings.retryMs ?? RETRY_MS);
    } finally {
      h.polling = false;
      this.polls--;
      freeUpstreamSlot();
      // Still held (not delivered, not dropped): back in its upstream's queue; and the freed slot is used.
      if (!this.stopped && this.held.get(h.row.taskKey) === h) this.due.push(h);
      this.dispatch();
    }
  }

  /** One poll of `group` less; an upstream with none running has no entry (upstreams come and go). */
  private leaveGroup(group: string): void {
    const running = (this.pollsByGroup.get(group) ?? 1) - 1;
    if (running > 0) this.pollsByGroup.set(group, running);
    else this.pollsByGroup.delete(group);
  }

  /**
   * Signals the workflow, then removes the row it answered (a newer enlistment stays). Marked due first
   * (unless the poll recorded an end): the workflow has yet to record it (pollOnAfter: when kept).
   */
  private async deliver(h: Held, result: WatchUpstreamTaskResult): Promise<void> {
    const { taskKey, workflowId, generation } = h.row;
    const at = (h.answeredAt ??= new Date().toISOString());
    if (!(result.kind === 'changed' && result.recorded === true))
      await this.deps.store.markAnswered(taskKey, generation, this.ownerId, at);
    const sent = await this.deps.signal(workflowId, { generation, result });
    if (sent === 'gone' && generation === CREATED_ENLISTMENT && !h.goneOnce) {
      // A run that adopted the API's row may be a start Temporal has yet to commit (its start time, which
      // decided the adoption, is stamped first): asked once more before the row goes.
      h.goneOnce = true;
      h.nextAt = Date.now() + RETRY_MS;
      return;
    }
    if (sent === 'gone') this.deps.logger.info('watch hub dropped a task whose workflow is gone');
    else if (pollOnAfter(h, result)) return;
    await this.deps.store.remove(taskKey, generation);
    if (this.held.get(taskKey) === h) this.held.delete(taskKey);
    watchHubTasks.set(this.held.size);
  }
}
