/**
 * Caps on open `subscriptions/listen` streams of one replica: per caller (on a project) and per project.
 * A slot is taken for both at once, synchronously, before anything is awaited, so concurrent requests
 * cannot all pass a check made before any of them counted (the race that let one caller hold 391
 * streams); the holder gives it back exactly once, on whichever path ends the request. Per replica only
 * (docs/protocol-decisions.md, "Listen caps").
 */
import { ProtocolError } from '../../protocol';

export interface SlotLimits {
  maxPerCaller: number;
  maxPerProject: number;
}

/** When a refused client may try again: a slot frees only when another stream ends, which no one knows. */
export const LISTEN_RETRY_AFTER_MS = 5_000;

export class StreamSlots {
  private readonly callers = new Map<string, number>();
  private readonly projects = new Map<string, number>();

  constructor(private readonly limits: SlotLimits) {}

  /**
   * Takes a slot for `caller` (unique across projects) and `project`, or throws `RateLimited` naming the
   * cap that refused it. Answers the function that gives the slot back (idempotent).
   */
  reserve(caller: string, project: string): () => void {
    const { maxPerCaller, maxPerProject } = this.limits;
    if ((this.callers.get(caller) ?? 0) >= maxPerCaller)
      throw refusal(`At most ${maxPerCaller} open subscriptions per caller`, 'caller', maxPerCaller);
    if ((this.projects.get(project) ?? 0) >= maxPerProject)
      throw refusal(`At most ${maxPerProject} open subscriptions per project`, 'project', maxPerProject);
    add(this.callers, caller, 1);
    add(this.projects, project, 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      add(this.callers, caller, -1);
      add(this.projects, project, -1);
    };
  }

  /** Streams held, for tests and metrics. */
  held(caller: string, project: string): { caller: number; project: number } {
    return { caller: this.callers.get(caller) ?? 0, project: this.projects.get(project) ?? 0 };
  }
}

/** A refusal at a cap: which one (`limit`), its value and when to retry. */
export function refusal(message: string, limit: 'caller' | 'project', max: number): ProtocolError {
  return new ProtocolError('RateLimited', message, { limit, max, retryAfterMs: LISTEN_RETRY_AFTER_MS });
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
