/**
 * Generated requests for the hostile-input test, with their oracle. A case is a *valid* request (every
 * 2026 method the gateway serves, and the 2025-era session methods) with, most of the time, exactly one
 * *mutation* that the spec says must be refused before any work: broken JSON or UTF-8, a bad frame, an
 * unknown method, a bad `_meta`, a header that disagrees with the body, wrong parameter types, a wrong
 * media type, a body too large or too deep, a foreign origin, a bad session... Each mutation states the
 * answer it must get (HTTP status and JSON-RPC code); a valid request must be answered (HTTP 200) and
 * may reach the upstream, a mutated one never. Every request carries its case number in `_meta` and in
 * its params, so the upstream side can tell which requests reached it.
 *
 * This module holds what the parts share: the test's limits, a case and its expectation, the valid request
 * before rendering (`Base`) and the mutations (`Mutation`). The valid requests are generated in
 * valid-requests.ts, the mutations and the whole case in mutations.ts, and the request as sent with the
 * answer it must get in oracle.ts.
 */
import type { RawRequest } from './wire';

export const CASE_META_KEY = 'com.taskrouter.fuzz/case';
export const CASE_PARAM = 'fuzzCase';
/** The gateway's configured body limit in this test (small, so "too large" is cheap to send). */
export const MAX_BODY_BYTES = 64 * 1024;
/**
 * The gateway's configured JSON shape limits in this test (`http.maxJson*`), small enough that a body
 * over each fits in MAX_BODY_BYTES.
 */
export const JSON_LIMITS = { maxJsonMembers: 500, maxJsonKeys: 2_000, maxJsonContainers: 2_000 };

/** What a case must be answered with: statuses, and JSON-RPC codes (`null`: no body at all). */
export interface Expectation {
  status: number[];
  codes: Array<number | null>;
}

export interface FuzzCase {
  n: number;
  /** The answer must carry the request's id (the frame was read before the refusal). */
  echoesId: boolean;
  id: unknown;
  /** `2026/<method>` or `2025/<method>`, then the mutation applied (`valid` for none). */
  method: string;
  mutation: string;
  request: RawRequest;
  /** Undefined for a valid request: answered with HTTP 200 and a result or an expected error. */
  expect?: Expectation;
  /** A valid request the gateway forwards to the upstream exactly once. */
  forwardsOnce: boolean;
  /** 2025-era results have no `resultType`. */
  era: '2026' | '2025';
}

export interface Session {
  id: string;
  version: string;
}

export interface Base {
  era: '2026' | '2025';
  method: string;
  params: Record<string, unknown>;
  /** 2026: the whole envelope; 2025: optional request `_meta` keys. */
  meta: Record<string, unknown>;
  headers: Record<string, string>;
  id: string | number;
  forwards: boolean;
  /** 2025: which session of the pool. */
  session?: number;
  /** 2025: send MCP-Protocol-Version (else the session's version is implied). */
  versionHeader?: boolean;
  notification?: boolean;
  /** 2025: an `initialize` (no session yet; a valid one opens a new session). */
  initialize?: boolean;
}

export type Mutation =
  | { kind: 'valid' }
  /** Valid, with an object as large as the limits allow in `_meta` (relayed upstream unchanged). */
  | { kind: 'valid-large' }
  /** Over a shape limit; `broken`: the JSON is cut short too, and still the shape is refused first. */
  | { kind: 'many-members'; where: 'meta' | 'params'; broken: boolean }
  | { kind: 'many-keys'; broken: boolean }
  | { kind: 'many-containers'; broken: boolean }
  | { kind: 'bad-json'; cut: number }
  | { kind: 'invalid-utf8'; bytes: number[] }
  | { kind: 'not-an-object'; raw: string }
  | { kind: 'bad-jsonrpc'; raw: string | undefined }
  | { kind: 'bad-id'; raw: string }
  | { kind: 'extra-member' }
  | { kind: 'bad-method'; raw: string }
  | { kind: 'unknown-method'; method: string }
  | { kind: 'bad-params'; raw: string }
  | { kind: 'no-meta'; variant: number }
  | { kind: 'bad-meta-type'; field: 'progressToken' | 'logLevel'; raw: unknown }
  | { kind: 'unsupported-version'; version: string }
  | { kind: 'header'; which: 'version' | 'method' | 'name'; how: 'missing' | 'other' | 'invalid' }
  | { kind: 'param-type'; raw: unknown; pick: number }
  | { kind: 'param-header'; how: 'missing' | 'other' }
  | { kind: 'tasks-undeclared' }
  | { kind: 'content-type'; value: string }
  | { kind: 'content-encoding'; value: string }
  | { kind: 'too-large' }
  | { kind: 'too-deep' }
  | { kind: 'http-method'; method: string }
  | { kind: 'below-endpoint' }
  | { kind: 'foreign-origin' }
  | { kind: 'notification' }
  | { kind: 'duplicate-member'; where: 'frame' | 'meta' }
  | { kind: 'unknown-project' }
  | { kind: 'locked'; token: string | undefined }
  | { kind: 'bad-session'; id: string }
  | { kind: 'bad-version-header'; version: string }
  | { kind: 'init-version'; version: string }
  | { kind: 'listen'; how: 'json-only' | 'bad-filter'; filter?: unknown };
