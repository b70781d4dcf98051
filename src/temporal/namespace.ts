/**
 * Self-healing set-up for external Temporal clusters: the gateway calls this on boot so a fresh cluster (or a
 * new namespace) gets the namespace and the custom search attributes that task workflows set. Without them,
 * starting a workflow with typed search attributes fails with INVALID_ARGUMENT (temporal-notes, gotcha 9).
 * The dev server does the same through `--namespace`/`--search-attribute` at start-up.
 */
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The services used here, which a client `Connection` and a worker's `NativeConnection` both offer. */
type Services = Pick<Connection, 'workflowService' | 'operatorService'>;

const INDEXED_VALUE_TYPES: Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType> = {
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** Closed-workflow retention for namespaces we create; matches the CLI's default. 90-day metadata lives in our DB. */
const RETENTION = '72h';

/** gRPC status codes (numeric, to avoid depending on @grpc/grpc-js directly). */
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

function grpcCode(err: unknown): number | undefined {
  return isGrpcServiceError(err) ? err.code : undefined;
}

async function namespaceExists(connection: Services, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (err) {
    if (grpcCode(err) === GRPC_NOT_FOUND) return false;
    throw err;
  }
}

/** Returns the attributes still missing; throws if one exists with a different type (needs an operator). */
async function missingSearchAttributes(
  connection: Services,
  namespace: string,
  keys: readonly SearchAttributeKey<SearchAttributeType>[],
): Promise<Record<string, temporal.api.enums.v1.IndexedValueType>> {
  const { customAttributes, systemAttributes } = await connection.operatorService.listSearchAttributes({
    namespace,
  });
  const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const key of keys) {
    const wanted = INDEXED_VALUE_TYPES[key.type];
    const existing = customAttributes[key.name] ?? systemAttributes[key.name];
    if (existing === undefined) {
      missing[key.name] = wanted;
    } else if (existing !== wanted) {
      // Removing/re-adding on SQL visibility can silently reuse a column (temporal-notes §7): never do it here.
      throw new Error(
        `Search attribute ${key.name} in namespace ${namespace} has type ${IndexedValueType[existing]}, ` +
          `expected ${IndexedValueType[wanted]}; fix it by hand (temporal operator search-attribute ...)`,
      );
    }
  }
  return missing;
}

/**
 * Registers `namespace` if it does not exist (72 h retention) and adds any missing custom search attributes.
 * Idempotent and safe to run concurrently from several gateway instances.
 *
 * Note: a real cluster caches namespaces and search attributes (tens of seconds by default); the dev server
 * refreshes search attributes on read. Callers starting workflows right after a first-time registration may
 * need to retry briefly.
 */
export async function ensureNamespaceAndSearchAttributes(
  connection: Services,
  namespace: string,
  keys: readonly SearchAttributeKey<SearchAttributeType>[],
): Promise<void> {
  if (!(await namespaceExists(connection, namespace))) {
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        // Proto durations take Long seconds; msToTs does the conversion.
        workflowExecutionRetentionPeriod: msToTs(RETENTION),
        description: 'Created by TaskRouter',
      });
    } catch (err) {
      // Another instance won the race: that's fine.
      if (grpcCode(err) !== GRPC_ALREADY_EXISTS) throw err;
    }
  }

  // The operator service resolves the namespace through the server's namespace cache, which can lag a fresh
  // registration by a few seconds: retry NOT_FOUND for a while before giving up.
  const deadline = Date.now() + 30_000;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    try {
      const missing = await missingSearchAttributes(connection, namespace, keys);
      if (Object.keys(missing).length === 0) return;
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
        return;
      } catch (err) {
        // A concurrent instance may have added them first; only fail if they are still missing.
        const still = await missingSearchAttributes(connection, namespace, keys);
        if (Object.keys(still).length === 0) return;
        throw err;
      }
    } catch (err) {
      const code = grpcCode(err);
      const transient = code === GRPC_NOT_FOUND || code === GRPC_ALREADY_EXISTS;
      if (!transient || Date.now() >= deadline) throw err;
    }
    await sleep(delay);
  }
}
