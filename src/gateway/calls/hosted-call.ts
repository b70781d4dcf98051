/**
 * Hosted tasks (docs/hosted-tasks.md): a tools/call of an ordinary tool that the project upstream's
 * hosting policy names runs as the gateway's own durable task (src/workflows/hosted-task-workflow.ts).
 * The call starts durably; if the upstream answers within the policy's promotion window the client
 * gets that answer as it is; otherwise a client that can take a task gets its handle, and one that
 * cannot waits inline (`limits.inlineTaskWaitMs`), with the task and its result on the dashboard
 * whatever becomes of the connection.
 *
 * An upstream that offers a task for a tool keeps deciding for it: hosting applies only to tools it runs
 * as ordinary calls (see `offersTask`).
 */
import type { HostingPolicy } from '../../config/hosting';
import { isHosted, mayRepeat } from '../../config/hosting';
import { META, PROTOCOL_VERSION, ProtocolError } from '../../protocol';
import type { RequestContext, Result } from '../context';
import { discoverUpstream } from '../forwarding';
import { waitForTask } from './inline-task';
import { declaresTasks, upstreamRunsTasks } from './qualification';
import { createTaskResult } from '../responses/responses';
import type { RoutedTool } from '../name-owners';
import type { ApprovalGate, HostedCall } from '../../workflows/messages';
import { firstResult, launchTask } from './task-call';
import type { RoutedCall } from './routed-call';

export interface Hosting {
  policy: HostingPolicy;
  /** The project upstream's control-plane id. */
  upstreamId: string;
}

/** The hosting policy that applies to this call, if the gateway hosts it. */
export async function hostingOf(ctx: RequestContext, routed: RoutedTool): Promise<Hosting | undefined> {
  const { project } = ctx.call;
  // Hosted tasks are tasks: a project without them (gate off, standard profile) hosts nothing.
  if (!project.features.tasks || project.toolProfile !== 'tasks') return undefined;
  const upstream = project.upstreams.find((u) => u.alias === routed.endpoint.alias);
  if (!upstream?.hosting || !isHosted(upstream.hosting, routed.name)) return undefined;
  if (await offersTask(ctx, routed)) return undefined;
  return { policy: upstream.hosting, upstreamId: upstream.id };
}

/**
 * The upstream may answer this tool with a task of its own: a 2025-11-25 server marks the tool
 * `taskSupport` `required` or `optional`; a 2026-07-28 server that advertises Tasks decides per call, so
 * any of its tools may become one.
 */
async function offersTask(ctx: RequestContext, routed: RoutedTool): Promise<boolean> {
  const support = taskSupportOf(routed);
  if (support === 'required' || support === 'optional') return true;
  if (routed.endpoint.probe?.era === 'legacy') return false;
  return upstreamRunsTasks(await discoverUpstream(ctx.deps.discovery, routed.endpoint));
}

/** What a 2025-11-25 server says of running this tool as a task (`execution.taskSupport`). */
export function taskSupportOf(routed: RoutedTool): unknown {
  return (routed.tool?.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
}

export async function callHosted(
  ctx: RequestContext,
  toolCall: RoutedCall,
  { policy, upstreamId }: Hosting,
  approval?: ApprovalGate,
): Promise<Result> {
  const { routed } = toolCall;
  const { call, deps } = ctx;
  const hosted: HostedCall = {
    // A call waiting for approval is a task at once (approval-call.ts).
    promoteAfterMs: approval ? 0 : policy.promoteAfterMs,
    repeatable: mayRepeat(policy, routed.name, routed.tool?.annotations),
    callDeadlineMs: policy.callDeadlineMs,
    ...(policy.maxConcurrent !== undefined && { maxConcurrent: policy.maxConcurrent, upstreamId }),
  };
  const launched = await launchTask(ctx, toolCall, hosted, approval);
  if (launched.outcome.kind !== 'task') return firstResult(ctx, launched);
  if (takesTask(ctx)) {
    // Durable before return: the workflow recorded the task before its start update answered.
    const record = await deps.store.getTask(launched.taskKey);
    if (!record) throw new ProtocolError('InternalError', 'The task was not recorded');
    return createTaskResult(launched.taskId, record.snapshot, deps.serverInfo);
  }
  call.tasks?.onStarted?.(launched.taskId);
  return waitForTask(ctx, launched);
}

/**
 * A 2025 client that asked for a task, or a 2026-07-28 client that declared Tasks, in a project that
 * offers tasks (one that does not has only clients that wait inline).
 */
function takesTask(ctx: RequestContext): boolean {
  const { call } = ctx;
  if (!call.project.features.tasks || call.project.toolProfile !== 'tasks') return false;
  if (call.tasks?.force) return true;
  return (
    declaresTasks(call.params._meta[META.clientCapabilities]) &&
    call.params._meta[META.protocolVersion] === PROTOCOL_VERSION
  );
}
