/**
 * One connection pool per project upstream (src/upstream/pools.ts), against a real HTTP server on
 * loopback that holds requests until the test lets them go.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { UpstreamPools } from '../../src/upstream/pools';

let server: Server;
let url: string;
/** Requests the server has seen, by the `who` query parameter, and those it still holds. */
const seen: string[] = [];
let held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const who = new URL(req.url ?? '/', 'http://x').searchParams.get('who') ?? '';
    seen.push(who);
    if (who.startsWith('hold')) held.push(res);
    else res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  for (const res of held) res.end();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function releaseHeld(): void {
  for (const res of held) res.end('done');
  held = [];
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!done()) throw new Error('timed out waiting');
}

const endpoint = (upstreamId: string | undefined) => ({
  alias: 'up',
  url,
  ...(upstreamId !== undefined && { upstreamId }),
});

function pools(over: Partial<ConstructorParameters<typeof UpstreamPools>[0]> = {}) {
  return new UpstreamPools({
    connections: 2,
    idleMs: 60_000,
    maxPools: 100,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 10_000,
    ...over,
  });
}

test('a pool per project upstream: by control-plane id, by origin without one', async () => {
  const p = pools();
  try {
    expect(p.for(endpoint('u1'))).toBe(p.for(endpoint('u1')));
    expect(p.for(endpoint('u1'))).not.toBe(p.for(endpoint('u2')));
    expect(p.for(endpoint(undefined))).toBe(p.for({ alias: 'other', url: `${url}/elsewhere` }));
    expect(p.for(endpoint(undefined))).not.toBe(p.for(endpoint('u1')));
    expect(p.size).toBe(3);
  } finally {
    await p.close();
  }
});

test("an upstream whose pool is full does not hold another's calls to the same address", async () => {
  const p = pools({ connections: 2 });
  seen.length = 0;
  try {
    const noisy = p.for(endpoint('noisy'));
    const calls = ['hold-1', 'hold-2', 'hold-3'].map((who) =>
      request(`${url}?who=${who}`, { dispatcher: noisy }).then((r) => r.body.text()),
    );
    await until(() => held.length === 2);
    // The third call of the full pool waits for a connection of its own pool...
    const victim = await request(`${url}?who=victim`, { dispatcher: p.for(endpoint('victim')) });
    expect(await victim.body.text()).toBe('ok');
    // ...while the other upstream's call was served: the server saw it with the first two still held.
    expect(seen).toEqual(['hold-1', 'hold-2', 'victim']);
    releaseHeld();
    await until(() => held.length === 1);
    releaseHeld();
    expect(await Promise.all(calls)).toEqual(['done', 'done', 'done']);
  } finally {
    releaseHeld();
    await p.close();
  }
});

test('idle pools are closed after idleMs; a pool with a request in flight never is', async () => {
  let now = 0;
  const p = pools({ idleMs: 1_000, now: () => now });
  try {
    const quiet = p.for(endpoint('quiet'));
    await (await request(`${url}?who=quiet`, { dispatcher: quiet })).body.text();
    const busy = p.for(endpoint('busy'));
    const pending = request(`${url}?who=hold-busy`, { dispatcher: busy }).then((r) => r.body.text());
    await until(() => held.length === 1);
    now += 1_001;
    p.closeIdle();
    expect(p.size).toBe(1);
    // The busy pool is the same one, and its request completes.
    expect(p.for(endpoint('busy'))).toBe(busy);
    releaseHeld();
    expect(await pending).toBe('done');
    // A new pool for the closed one's upstream works.
    const again = p.for(endpoint('quiet'));
    expect(again).not.toBe(quiet);
    expect(await (await request(`${url}?who=quiet`, { dispatcher: again })).body.text()).toBe('ok');
  } finally {
    releaseHeld();
    await p.close();
  }
});

test('past maxPools the least recently used idle pools are closed at once', async () => {
  const p = pools({ maxPools: 3 });
  try {
    const first = p.for(endpoint('a'));
    const b = p.for(endpoint('b'));
    p.for(endpoint('c'));
    p.for(endpoint('a')); // a is now the most recently used
    const d = p.for(endpoint('d'));
    expect(p.size).toBe(3);
    expect(p.for(endpoint('a'))).toBe(first);
    expect(p.for(endpoint('d'))).toBe(d);
    expect(await (await request(`${url}?who=d`, { dispatcher: d })).body.text()).toBe('ok');
    // b was the least recently used: closed, and made anew when asked for again.
    expect(p.for(endpoint('b'))).not.toBe(b);
    expect(p.size).toBe(3);
  } finally {
    await p.close();
  }
});
