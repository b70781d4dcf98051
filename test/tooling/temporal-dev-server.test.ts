import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { isPidAlive } from '../../src/tooling/processes';
import { startDevServer, type DevServer } from '../../src/tooling/temporal-dev-server';
import { ensureNamespaceAndSearchAttributes } from '../../src/temporal/namespace';
import { SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';
import { testTemporal } from '../helpers/temporal';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

async function customAttributes(connection: Connection, namespace: string): Promise<Record<string, number>> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  return res.customAttributes;
}

describe('shared test dev server (global setup)', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await Connection.connect({ address: testTemporal().address });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('serves the test namespace', async () => {
    const { namespace } = testTemporal();
    expect(namespace).toBe('taskrouter-test');
    const client = new Client({ connection, namespace });
    const res = await client.workflowService.describeNamespace({ namespace });
    expect(res.namespaceInfo?.name).toBe(namespace);
  });

  it('has every gateway search attribute registered', async () => {
    const attrs = await customAttributes(connection, testTemporal().namespace);
    for (const key of SEARCH_ATTRIBUTES) {
      expect(attrs[key.name]).toBe(KEYWORD);
    }
  });
});

describe('startDevServer (separate server)', () => {
  let server: DevServer | undefined;

  afterAll(async () => {
    // Only reached with a live server if an assertion failed before stop().
    await server?.stop();
  });

  it('starts, is healthy, heals a new namespace and stops by pid', async () => {
    const started = Date.now();
    server = await startDevServer({ namespace: 'taskrouter-second' });
    const startupMs = Date.now() - started;
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.address).not.toBe(testTemporal().address);
    expect(isPidAlive(server.pid)).toBe(true);
    process.stderr.write(`second dev server ready in ${(startupMs / 1000).toFixed(1)} s\n`);

    const connection = await Connection.connect({ address: server.address });
    try {
      const health = await connection.healthService.check({});
      expect(health.status).toBe(1); // SERVING
      const ns = await connection.workflowService.describeNamespace({ namespace: 'taskrouter-second' });
      expect(ns.namespaceInfo?.name).toBe('taskrouter-second');

      // External-cluster path: namespace and search attributes created on demand, idempotently.
      await ensureNamespaceAndSearchAttributes(connection, 'taskrouter-healed', SEARCH_ATTRIBUTES);
      await ensureNamespaceAndSearchAttributes(connection, 'taskrouter-healed', SEARCH_ATTRIBUTES);
      const healed = await connection.workflowService.describeNamespace({ namespace: 'taskrouter-healed' });
      expect(healed.config?.workflowExecutionRetentionTtl?.seconds?.toString()).toBe(String(72 * 3600));
      const attrs = await customAttributes(connection, 'taskrouter-healed');
      for (const key of SEARCH_ATTRIBUTES) expect(attrs[key.name]).toBe(KEYWORD);
    } finally {
      await connection.close();
    }

    const { pid } = server;
    await server.stop();
    expect(isPidAlive(pid)).toBe(false);
    await server.stop(); // idempotent
    server = undefined;
  });
});
