import type { ErrorKind } from '../../src/protocol';
import { ERROR, ProtocolError, RelayedError } from '../../src/protocol';
import { toJsonRpcError } from '../../src/api/errors';

describe('toJsonRpcError', () => {
  describe('ProtocolError', () => {
    it.each(Object.keys(ERROR) as ErrorKind[])(
      '%s maps to its code and HTTP status from the table',
      (kind) => {
        const r = toJsonRpcError(new ProtocolError(kind, `message for ${kind}`), 'req-1');
        expect(r.status).toBe(ERROR[kind].httpStatus);
        expect(r.body).toEqual({
          jsonrpc: '2.0',
          id: 'req-1',
          error: { code: ERROR[kind].code, message: `message for ${kind}` },
        });
        expect(r.body.error).not.toHaveProperty('data');
      },
    );

    it('uses the statuses the spec requires', () => {
      expect(toJsonRpcError(new ProtocolError('MethodNotFound', 'm'), 1).status).toBe(404);
      expect(toJsonRpcError(new ProtocolError('MissingRequestMeta', 'm'), 1).status).toBe(400);
      expect(toJsonRpcError(new ProtocolError('HeaderMismatch', 'm'), 1).body.error.code).toBe(-32020);
      expect(toJsonRpcError(new ProtocolError('UnsupportedProtocolVersion', 'm'), 1).status).toBe(400);
    });

    it('carries data, including falsy data', () => {
      const data = { supported: ['2026-07-28'], requested: '1900-01-01' };
      expect(
        toJsonRpcError(new ProtocolError('UnsupportedProtocolVersion', 'm', data), 7).body.error.data,
      ).toBe(data);
      expect(toJsonRpcError(new ProtocolError('InvalidParams', 'm', 0), 7).body.error).toHaveProperty(
        'data',
        0,
      );
      expect(toJsonRpcError(new ProtocolError('InvalidParams', 'm', null), 7).body.error).toHaveProperty(
        'data',
        null,
      );
    });

    it('keeps a null id', () => {
      expect(toJsonRpcError(new ProtocolError('ParseError', 'Parse error'), null).body.id).toBeNull();
    });
  });

  describe('RelayedError', () => {
    it.each([
      [-32601, 404],
      [-32020, 400],
      [-32021, 400],
      [-32022, 400],
      [-32602, 200],
      [-32603, 200],
      [-32600, 200],
      [-32000, 200],
      [-31001, 200],
      [42, 200],
    ])('code %d → HTTP %d', (code, status) => {
      const r = toJsonRpcError(new RelayedError(code, 'upstream says no'), 5);
      expect(r.status).toBe(status);
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code, message: 'upstream says no' } });
    });

    it('relays code, message and data unchanged', () => {
      const data = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
      const r = toJsonRpcError(new RelayedError(-32021, 'capability missing', data), 'x');
      expect(r.body.error).toEqual({ code: -32021, message: 'capability missing', data });
    });
  });

  describe('unknown errors', () => {
    it.each<[string, unknown]>([
      ['an Error', new Error('ECONNREFUSED 10.0.0.7:5432 password=hunter2')],
      ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'secret')")],
      ['a string', 'db password=hunter2'],
      ['undefined', undefined],
      ['an object with code and message', { code: -32602, message: 'internal detail', data: { stack: 'x' } }],
    ])('%s becomes -32603 / 500 revealing nothing', (_label, err) => {
      const r = toJsonRpcError(err, 9);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'Internal error' } });
      const text = JSON.stringify(r.body);
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('secret');
      expect(text).not.toContain('internal detail');
    });
  });
});
