import { decodeHeaderValue, encodeHeaderValue, nameFieldFor, requestHeaders } from '../../src/protocol';

const b64 = (s: string): string => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;

describe('encodeHeaderValue / decodeHeaderValue', () => {
  it.each(['execute_sql', 'us-west1', 'a', '42', 'true', 'file:///tmp/a b.txt', '~!@#$%^&*()_+{}|:"<>?'])(
    'sends plain visible ASCII %j as is and decodes it unchanged',
    (value) => {
      expect(encodeHeaderValue(value)).toBe(value);
      expect(decodeHeaderValue(value)).toBe(value);
    },
  );

  it.each(['café', '日本語', 'emoji 🚀', 'Zürich'])(
    'base64-encodes non-ASCII %j and round-trips it',
    (value) => {
      const encoded = encodeHeaderValue(value);
      expect(encoded).toBe(b64(value));
      expect(encoded).toMatch(/^[\x21-\x7e]+$/);
      expect(decodeHeaderValue(encoded)).toBe(value);
    },
  );

  it.each([' lead', 'trail ', ' both ', '\tTab', 'line\nbreak', 'cr\r', 'nul\0', 'del\x7f', ' ', ''])(
    'base64-encodes leading/trailing whitespace and control characters: %j',
    (value) => {
      const encoded = encodeHeaderValue(value);
      expect(encoded).toBe(b64(value));
      expect(decodeHeaderValue(encoded)).toBe(value);
    },
  );

  it('keeps inner spaces plain', () => {
    expect(encodeHeaderValue('hello world')).toBe('hello world');
  });

  it.each(['=?base64?aGk=?=', '=?base64?', '=?base64?not base64?=', '=?base64??='])(
    'encodes a value that looks like the sentinel (%j) so it is not decoded as one',
    (value) => {
      const encoded = encodeHeaderValue(value);
      expect(encoded).not.toBe(value);
      expect(encoded).toBe(b64(value));
      expect(decodeHeaderValue(encoded)).toBe(value);
    },
  );

  it('decodes a well-formed sentinel', () => {
    expect(decodeHeaderValue('=?base64?aGk=?=')).toBe('hi');
    expect(decodeHeaderValue(b64('Grüße'))).toBe('Grüße');
    expect(decodeHeaderValue('=?base64??=')).toBe('');
  });

  it('reads a half-written wrapper as a literal value (SEP-2243)', () => {
    expect(decodeHeaderValue('=?base64?aGk=')).toBe('=?base64?aGk=');
  });

  it.each([
    '=?base64?SGVsbG8?=', // unpadded base64
    '=?base64?a$Gk?=', // character outside the base64 alphabet
    '=?base64?aGk=?= ', // trailing text after the closing marker
    '=?base64?aGk===?=', // too much padding
    '=?base64?aG k=?=', // inner space
  ])('returns undefined for the malformed sentinel %j', (raw) => {
    expect(decodeHeaderValue(raw)).toBeUndefined();
  });

  it('treats the markers case-sensitively', () => {
    // Not the sentinel: an ordinary visible-ASCII value.
    expect(decodeHeaderValue('=?BASE64?aGk=?=')).toBe('=?BASE64?aGk=?=');
  });

  it.each([' lead', 'trail ', 'a\tb', 'ctl\x01', 'café'])('rejects invalid raw characters in %j', (raw) => {
    expect(decodeHeaderValue(raw)).toBeUndefined();
  });
});

describe('nameFieldFor', () => {
  it.each([
    ['tools/call', 'name'],
    ['prompts/get', 'name'],
    ['resources/read', 'uri'],
    ['tasks/get', 'taskId'],
    ['tasks/update', 'taskId'],
    ['tasks/cancel', 'taskId'],
  ] as const)('%s mirrors params.%s', (method, field) => {
    expect(nameFieldFor(method)).toBe(field);
  });

  it.each([
    'tools/list',
    'server/discover',
    'subscriptions/listen',
    'tasks/list',
    'tasks/result',
    'TOOLS/CALL',
    '',
  ])('%j has no Mcp-Name field', (method) => {
    expect(nameFieldFor(method)).toBeUndefined();
  });
});

test('requestHeaders mirrors the protocol version, method and (encoded) name of one request', () => {
  expect(requestHeaders('tools/call', { name: 'café' }, '2026-07-28')).toEqual({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': encodeHeaderValue('café'),
  });
  expect(requestHeaders('tools/list', {}, '2026-07-28')).not.toHaveProperty('mcp-name');
});
