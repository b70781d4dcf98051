/**
 * Whether a tools/call takes the durable task path. Every condition is checked per request; when any
 * fails the call takes the ordinary path. Also the capability checks the task follow-ups repeat.
 */
import type { ClientCapabilities, DiscoverResult } from '../../protocol';
import { PROTOCOL_VERSION, TASKS_EXTENSION } from '../../protocol';

export interface QualificationInput {
  clientCapabilities: ClientCapabilities;
  protocolVersion: string;
  projectTasksEnabled: boolean;
  /** The project's tool profile supports Tasks. */
  profileSupportsTasks: boolean;
  /** The upstream's current (unexpired) server/discover answer. */
  upstreamDiscover: DiscoverResult;
}

export type Qualification = { taskPath: true } | { taskPath: false; reason: string };

export function declaresTasks(capabilities: ClientCapabilities): boolean {
  return capabilities.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The upstream speaks 2026-07-28 and advertises Tasks. */
export function upstreamRunsTasks(d: DiscoverResult): boolean {
  return (
    d.supportedVersions.includes(PROTOCOL_VERSION) &&
    d.capabilities.extensions?.[TASKS_EXTENSION] !== undefined
  );
}

export function declaresFormElicitation(c: ClientCapabilities): boolean {
  // `elicitation: {}` means form only, per 2026-07-28.
  return c.elicitation !== undefined && (c.elicitation.form !== undefined || c.elicitation.url === undefined);
}

export function qualifyForTaskPath(q: QualificationInput): Qualification {
  if (!declaresTasks(q.clientCapabilities))
    return { taskPath: false, reason: 'client did not declare Tasks' };
  if (q.protocolVersion !== PROTOCOL_VERSION) return { taskPath: false, reason: 'protocol version' };
  if (!q.profileSupportsTasks) return { taskPath: false, reason: 'tool profile does not support Tasks' };
  if (!q.projectTasksEnabled) return { taskPath: false, reason: 'project Tasks gate is off' };
  if (!q.upstreamDiscover.supportedVersions.includes(PROTOCOL_VERSION)) {
    return { taskPath: false, reason: 'upstream does not speak 2026-07-28' };
  }
  if (q.upstreamDiscover.capabilities.extensions?.[TASKS_EXTENSION] === undefined) {
    return { taskPath: false, reason: 'upstream does not advertise Tasks' };
  }
  return { taskPath: true };
}
