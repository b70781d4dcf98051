/**
 * A tools/call on the durable task path: the request payload goes to the payload store, the task
 * workflow starts through the task engine, and its first outcome (a task, a synchronous result or an
 * error) becomes the answer.
 */
import type { CallToolParams, JsonRpcErrorObject, Tool } from '../protocol';
import { META, ProtocolError, RelayedError } from '../protocol';
import { principalId } from '../store/control-plane-types';
import type { PayloadKind } from '../store/payload-store';
import { taskKeyOf } from '../store/task-store';
import { relayableMeta } from '../upstream/meta';
import type { UpstreamCallPayload } from '../workflows/messages';
import type { GatewayDeps, RequestContext, Result } from './context';
import { errorName } from './context';
import { finishToolResult } from './ordinary-call';
import { declaresFormElicitation } from './qualification';
import { createTaskResult } from './responses';
import type { RoutedTool } from './routing';
import { mintTaskId } from './task-ids';

export async function startTask(
  ctx: RequestContext,
  params: CallToolParams,
  routed: RoutedTool,
  headers: Record<string, string>,
): Promise<Result> {
  const { call, deps } = ctx;
  const taskId = mintTaskId();
  const taskKey = taskKeyOf(taskId);
  const capabilities = call.params._meta[META.clientCapabilities];
  // The payload goes to the payload store; Temporal gets its id only.
  const request: UpstreamCallPayload = {
    ...(params.arguments !== undefined && { arguments: params.arguments }),
    ...(params.inputResponses !== undefined && { inputResponses: params.inputResponses }),
    ...(params.requestState !== undefined && { requestState: params.requestState }),
    relayedMeta: relayableMeta(call.params._meta),
    ...(Object.keys(headers).length > 0 && { headers }),
  };
  const requestRef = await deps.payloads.put(taskKey, 'request', request);
  let outcome;
  try {
    outcome = await deps.engine.start(
      {
        taskKey,
        project: call.project.id,
        projectSlug: call.project.slug,
        upstream: routed.endpoint.alias,
        caller: principalId(call.principal),
        principal: call.principal,
        authorizationId: routed.endpoint.authorizationId,
        createdAt: new Date().toISOString(),
        call: {
          tool: routed.name,
          requestRef,
          protocolVersion: call.params._meta[META.protocolVersion],
          elicitationForm: declaresFormElicitation(capabilities),
          idempotent: isIdempotent(routed.tool),
        },
      },
      deps.startTimeoutMs,
    );
  } catch (err) {
    deps.logger.error({ err: errorName(err), project: call.project.slug }, 'task start failed');
    throw new ProtocolError('TaskEngineUnavailable', 'The gateway could not start the task; try again later');
  }
  switch (outcome.kind) {
    case 'task': {
      // Durable before return: the workflow recorded the task (with its detail) before answering.
      const record = await deps.store.getTask(taskKey);
      if (!record) throw new ProtocolError('InternalError', 'The task was not recorded');
      return createTaskResult(taskId, record.snapshot, deps.serverInfo);
    }
    case 'result': {
      // A synchronous answer on the task path is processed like any result, but never cached.
      const result = await payload<Result>(deps, outcome.resultRef, taskKey, 'result');
      return finishToolResult(ctx, result);
    }
    case 'error': {
      const error =
        'errorRef' in outcome
          ? await payload<JsonRpcErrorObject>(deps, outcome.errorRef, taskKey, 'error')
          : outcome.error;
      throw new RelayedError(error.code, error.message, error.data);
    }
  }
}

function isIdempotent(tool: Tool | undefined): boolean {
  return tool?.annotations?.idempotentHint === true;
}

/** A payload the workflow just stored; missing only if it was purged in between. */
async function payload<T>(deps: GatewayDeps, ref: string, taskKey: string, kind: PayloadKind): Promise<T> {
  const value = await deps.payloads.get<T>(ref, taskKey, kind);
  if (value === undefined) throw new ProtocolError('InternalError', 'The result is no longer stored');
  return value;
}
