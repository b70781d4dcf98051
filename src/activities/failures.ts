/** Failure types of the worker's upstream calls, which the workflows' retry policies refer to. */
export const FAILURE = {
  /** The first tools/call may have reached the upstream; re-sending could repeat a side effect. */
  callOutcomeUnknown: 'UpstreamCallOutcomeUnknown',
  /** The task did not start before its deadline (the client was told so): nothing is sent. */
  notStarted: 'TaskNotStarted',
  upstreamUnreachable: 'UpstreamUnreachable',
  upstreamProtocol: 'UpstreamProtocolViolation',
} as const;
