/**
 * The caller's OAuth access token rides in the request object for token exchange (caller-token.ts):
 * whatever serializes or inspects that object (a log line, JSON, string interpolation) sees
 * `[redacted]`; only `reveal()` gives the token.
 */
import { inspect } from 'node:util';
import pino from 'pino';
import { CallerToken } from '../../src/gateway/caller-token';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl';

test('the token is revealed on purpose only', () => {
  const call = { method: 'tools/call', oauthToken: new CallerToken(TOKEN) };
  expect(call.oauthToken.reveal()).toBe(TOKEN);
  expect(JSON.stringify(call)).not.toContain(TOKEN);
  expect(JSON.stringify(call)).toContain('[redacted]');
  expect(inspect(call, { depth: 5, showHidden: true })).not.toContain(TOKEN);
  expect(`${call.oauthToken}`).toBe('[redacted]');
  const lines: string[] = [];
  pino({ level: 'info' }, { write: (l: string) => lines.push(l) }).info({ call }, 'a call');
  expect(lines.join('')).not.toContain(TOKEN);
  // A copy of the request (`{ ...caller }`) carries the same redacting object.
  expect(JSON.stringify({ ...call })).not.toContain(TOKEN);
});
