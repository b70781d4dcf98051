/** Pure pieces of a hosted call (activities/hosted-call.ts): its final answer and its progress text. */
import type { InputRequests } from '../protocol';
import { InputRequiredResultSchema } from '../protocol';
import type { UpstreamReply } from '../upstream/client';

/**
 * The upstream's questions (an MRTR `input_required` result), when the client declared form elicitation
 * and so may answer them through the task; otherwise the answer is left to `ordinaryAnswer`.
 */
export function inputRequired(
  reply: UpstreamReply,
  formDeclared: boolean,
): { inputRequests: InputRequests; requestState?: string } | undefined {
  if (!formDeclared || reply.kind !== 'result' || reply.result.resultType !== 'input_required')
    return undefined;
  const parsed = InputRequiredResultSchema.safeParse(reply.result);
  if (!parsed.success || !parsed.data.inputRequests) return undefined;
  return {
    inputRequests: parsed.data.inputRequests,
    ...(typeof parsed.data.requestState === 'string' && { requestState: parsed.data.requestState }),
  };
}

/**
 * A hosted call's answer is the final one. An upstream that asks for input (an MRTR `input_required`
 * result) or answers with a task anyway (it was told neither is possible) ends the call with a clear
 * error instead of a "completed" task carrying a question or a handle.
 */
export function ordinaryAnswer(upstream: string, reply: UpstreamReply): UpstreamReply {
  if (reply.kind !== 'result') return reply;
  const type = reply.result.resultType;
  if (type !== 'input_required' && type !== 'task') return reply;
  const message =
    type === 'task'
      ? `Upstream "${upstream}" answered a hosted call with a task of its own, which it was not offered`
      : `Upstream "${upstream}" asked for input during a hosted call; hosted calls do not relay input requests, so the call ended`;
  return { kind: 'error', error: { code: -32603, message }, httpStatus: 200 };
}

/** "message (3/10)", or what of it the notification carries. */
export function progressMessage(params: unknown, note?: string): string {
  const p = (params ?? {}) as { progress?: unknown; total?: unknown; message?: unknown };
  const count =
    typeof p.progress === 'number'
      ? typeof p.total === 'number'
        ? `${p.progress}/${p.total}`
        : String(p.progress)
      : undefined;
  const text = typeof p.message === 'string' ? p.message : 'Working';
  return [text, count && `(${count})`, note && `[${note}]`].filter(Boolean).join(' ');
}
