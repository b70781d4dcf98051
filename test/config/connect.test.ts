/**
 * Where the gateway's client metadata document is published (config/connect.ts): only under an https
 * public origin, as the Client ID Metadata Documents draft requires, unless loopback http is allowed
 * explicitly (tests and one-machine development); never when switched off or without a public origin.
 */
import { ConnectConfigSchema, clientMetadataDocumentUrl } from '../../src/config/connect';
import { parseConfig } from '../../src/config/config';

const connect = (input: Record<string, unknown> = {}) => ConnectConfigSchema.parse(input);

test('published under an https public origin, by default', () => {
  expect(clientMetadataDocumentUrl('https://mcp.example.com', connect())).toBe(
    'https://mcp.example.com/v1/connect/client-metadata.json',
  );
});

test('not published over http, not even on loopback, unless loopback http is allowed', () => {
  expect(clientMetadataDocumentUrl('http://mcp.example.com', connect())).toBeUndefined();
  expect(clientMetadataDocumentUrl('http://127.0.0.1:8080', connect())).toBeUndefined();
  const loopback = connect({ allowLoopbackHttp: true });
  expect(clientMetadataDocumentUrl('http://127.0.0.1:8080', loopback)).toBe(
    'http://127.0.0.1:8080/v1/connect/client-metadata.json',
  );
  expect(clientMetadataDocumentUrl('http://localhost:8080', loopback)).toBeDefined();
  // Allowing loopback http does not allow any other http origin.
  expect(clientMetadataDocumentUrl('http://10.0.0.5:8080', loopback)).toBeUndefined();
  expect(clientMetadataDocumentUrl('http://mcp.example.com', loopback)).toBeUndefined();
});

test('not published when switched off or without a public origin', () => {
  expect(
    clientMetadataDocumentUrl('https://mcp.example.com', connect({ clientMetadataDocument: false })),
  ).toBeUndefined();
  expect(clientMetadataDocumentUrl(undefined, connect())).toBeUndefined();
});

test('the connect section has its defaults in a parsed configuration', () => {
  const config = parseConfig({
    encryption: { activeKeyId: 'k', keys: { k: Buffer.alloc(32).toString('base64') } },
  });
  expect(config.connect).toEqual({
    clientMetadataDocument: true,
    clientName: 'TaskRouter gateway',
    allowLoopbackHttp: false,
  });
});
