/**
 * The task's state inside the workflow. Invariants: `observed` is the latest upstream observation (with
 * the gateway's createdAt); `answeredKeys` holds every input key the client has answered, for the
 * task's whole life (keys are unique per task), so an answered request is never shown again; inputs wait
 * in `pendingInputs` until the loop forwards them.
 */
import { TERMINAL_TASK_STATUSES } from '../protocol/constants';
import type { CarriedTaskState, InputSignal, TaskObservation } from './messages';

export class TaskState {
  constructor(readonly s: CarriedTaskState) {}

  get terminal(): boolean {
    return TERMINAL_TASK_STATUSES.has(this.s.observed.status);
  }

  /** Input for the loop to forward upstream. */
  get hasWork(): boolean {
    return this.s.pendingInputs.length > 0;
  }

  /** Input requests the gateway cannot relay through a task: anything but form elicitation it declared. */
  unsupportedInputs(formDeclared: boolean): string[] {
    return unsupportedInputs(this.s.observed, formDeclared);
  }

  /**
   * Keeps only answers to outstanding, unanswered keys; others are ignored as the spec says. Outstanding
   * is what this workflow observed, or what the gateway's record showed the client (`open`): the record
   * can be ahead of the workflow by one change.
   */
  acceptInput(input: InputSignal): void {
    if (this.terminal) return;
    const outstanding = this.s.observed.inputs ?? {};
    const keys = input.keys.filter(
      (key, i) =>
        (Object.hasOwn(outstanding, key) || input.open?.includes(key) === true) &&
        !this.s.answeredKeys.includes(key) &&
        input.keys.indexOf(key) === i,
    );
    if (keys.length === 0) return;
    this.s.answeredKeys.push(...keys);
    this.s.pendingInputs.push({ ref: input.ref, keys });
  }

  observe(observation: TaskObservation): void {
    this.s.observed = { ...observation, createdAt: this.s.observed.createdAt };
  }

  /** The task as the client sees it: answered input requests removed at once, not after the next poll. */
  present(): TaskObservation {
    const o = this.s.observed;
    if (o.status !== 'input_required') return o;
    const open = Object.fromEntries(
      Object.entries(o.inputs ?? {}).filter(([k]) => !this.s.answeredKeys.includes(k)),
    );
    if (Object.keys(open).length > 0) return { ...o, inputs: open };
    // Everything asked for has been answered: the upstream is working again as far as the client knows.
    const { inputs: _answered, ...rest } = o;
    return { ...rest, status: 'working' };
  }
}

/**
 * The open input requests of an observation that a client cannot answer through a task: anything but
 * form elicitation, and that only when the client declared form support (upstream and hosted tasks).
 */
export function unsupportedInputs(o: TaskObservation, formDeclared: boolean): string[] {
  const requests = o.status === 'input_required' ? (o.inputs ?? {}) : {};
  return Object.entries(requests)
    .filter(([, r]) => !(formDeclared && r.method === 'elicitation/create' && (r.mode ?? 'form') === 'form'))
    .map(([key, r]) => `${key}: ${r.method}${r.mode ? ` (${r.mode})` : ''}`);
}
