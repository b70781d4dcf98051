/** Local (never serialized) errors of the upstream client. */

/**
 * The upstream could not be reached or answered with something that is not JSON-RPC.
 * `mayHaveReached` says whether the request could have been processed: a side-effecting call that may
 * have reached the upstream must not be re-sent.
 */
export class UpstreamTransportError extends Error {
  override readonly name = 'UpstreamTransportError';
  constructor(
    message: string,
    readonly mayHaveReached: boolean,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}
