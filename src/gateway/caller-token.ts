/**
 * The caller's own OAuth access token, carried with a request for the upstreams that exchange it (RFC
 * 8693, docs/oauth.md). It travels inside the request object only: it reads as `[redacted]` when that
 * object is logged, serialized or inspected, and never reaches a workflow, a store row or a log.
 */
import { inspect } from 'node:util';

export class CallerToken {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The token, for the one request that sends it (the exchange at the issuer). */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'CallerToken [redacted]';
  }
}
