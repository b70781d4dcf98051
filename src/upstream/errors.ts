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

/**
 * The address policy refused the upstream's address (address-policy.ts): no connection was opened and
 * nothing was sent. Not worth retrying: the same address is refused again.
 */
export class UpstreamAddressRefusedError extends UpstreamTransportError {
  constructor(alias: string) {
    super(
      `Upstream "${alias}" is in a network the gateway may not call for it (upstreams.networks.allow)`,
      false,
    );
  }
}
