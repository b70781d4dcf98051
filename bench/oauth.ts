/**
 * `npm run bench:oauth [-- --n 2000 --concurrency 4 --ms 5 --block 50 --warmup 200]`
 *
 * What OAuth access tokens cost on the proxy path (issue 17: at most 3% at p50 over API tokens). Same
 * set-up as bench:proxy (in-memory Temporal dev server, the example upstream, the gateway's API role on a
 * temp SQLite store), with project `bench` requiring a token, a user with an API token, and an issuer
 * served in this process (discovery document and JWKS over HTTP, an RS256 key made here) whose tokens the
 * gateway validates with jose like any issuer's. Every call is a cache miss (unique `nonce`), so each one
 * goes upstream, and the two sides run in alternating ABBA blocks:
 *
 * - `api-token` vs `oauth`: the same access token on every call, as a client uses it until it expires
 *   (the gateway verifies it once, then remembers it by hash);
 * - `api-token` vs `oauth-fresh`: a different token on every call (signed ahead, outside the timing),
 *   so each one is fully verified (signature with the cached JWKS, claims, user lookup).
 *
 * Prints a table, PASS/FAIL of the p50 ratio against 1.03 for `oauth` (informational for `oauth-fresh`),
 * and one JSON line with every figure. Leaves no processes behind.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { readFlags } from './options';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pino from 'pino';
import { Agent } from 'undici';
import { startExampleUpstream } from '../examples/upstream/server';
import { parseConfig } from '../src/config/config';
import { startRuntime } from '../src/main/runtime';
import { gatewayBasics, note, onCleanup, runBench, startTemporal, tempDir } from './env';
import { mapLimit, McpHttpClient, percentile, ratio, round, summarize, table } from './support';

const TARGET_P50 = 1.03;
const API_TOKEN = 'trp_bench-oauth-api-token-0000000000000';

function options() {
  const flags = readFlags(process.argv.slice(2), {
    n: '2000',
    concurrency: '4',
    ms: '5',
    block: '50',
    warmup: '200',
  });
  const num = (name: Parameters<typeof flags.whole>[0]): number => flags.whole(name, 0);
  return {
    n: num('n'),
    concurrency: num('concurrency'),
    ms: num('ms'),
    block: num('block'),
    warmup: num('warmup'),
  };
}
type Options = ReturnType<typeof options>;

/** An issuer in this process: discovery, JWKS, and a signer. */
async function startIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server = http.createServer((req, res) => {
    const doc =
      req.url === '/.well-known/oauth-authorization-server'
        ? { issuer, jwks_uri: `${issuer}/jwks` }
        : req.url === '/jwks'
          ? { keys: [jwk] }
          : undefined;
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup('issuer', () => new Promise((resolve) => server.close(() => resolve())));
  const sign = (audience: string, jti: string) =>
    new SignJWT({ scope: 'mcp:tools', preferred_username: 'bench', groups: ['bench'], jti })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject('bench-user')
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
  return { issuer, sign };
}

interface Sample {
  latencies: number[];
  errors: string[];
}

async function block(client: McpHttpClient, count: number, opts: Options, args: () => object, into: Sample) {
  await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    opts.concurrency,
    async () => {
      const t0 = performance.now();
      const reply = await client.callTool('work', args() as Record<string, unknown>);
      const latency = performance.now() - t0;
      if (reply.status !== 200 || reply.error || reply.result?.isError === true) {
        into.errors.push(`HTTP ${reply.status} ${reply.error?.message ?? ''}`);
      } else into.latencies.push(latency);
    },
  );
}

/** `n` calls per side in ABBA blocks; every call a cache miss. */
async function pair(a: McpHttpClient, b: McpHttpClient, n: number, opts: Options) {
  const run = randomUUID().slice(0, 8);
  let i = 0;
  const args = () => ({ ms: opts.ms, nonce: `${run}-${i++}` });
  const samples: [Sample, Sample] = [
    { latencies: [], errors: [] },
    { latencies: [], errors: [] },
  ];
  for (let k = 0, done = 0; done < n; k++) {
    const count = Math.min(opts.block, n - done);
    const order: Array<0 | 1> = k % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) await block(side === 0 ? a : b, count, opts, args, samples[side]);
    done += count;
  }
  return samples;
}

async function main(): Promise<void> {
  const opts = options();
  const t0 = performance.now();
  const temporal = await startTemporal();
  const dir = tempDir();
  const upstream = await startExampleUpstream({ name: 'bench-oauth-upstream' });
  onCleanup('upstream', () => upstream.close());
  const idp = await startIssuer();

  // The resource names come from the public origin, so the port is chosen before the gateway starts.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const base = `http://127.0.0.1:${port}`;
  const bootstrapFile = path.join(dir, 'bootstrap.json');
  writeFileSync(
    bootstrapFile,
    JSON.stringify({
      users: [{ handle: 'apiuser', tokens: [{ name: 'bench', token: API_TOKEN }] }],
      teams: [{ slug: 'bench', members: ['apiuser'] }],
      projects: [
        {
          slug: 'bench',
          team: 'bench',
          namespacing: false,
          upstreams: [{ alias: 'example', url: upstream.url }],
        },
      ],
    }),
  );
  const basics = gatewayBasics(temporal, dir);
  const config = parseConfig({
    ...basics,
    http: { ...basics.http, port, publicBaseUrl: base },
    bootstrapFile,
    oauth: {
      issuers: [{ issuer: idp.issuer, requiredScopes: ['mcp:tools'], groupTeams: { bench: 'bench' } }],
    },
  });
  // The gateway's warnings and errors are counted, not printed (pino levels: 40 warn, 50 error).
  const logSink = { warnings: 0, errors: 0 };
  const logger = pino(
    { level: process.env['BENCH_LOG_LEVEL'] ?? 'warn' },
    {
      write: (line: string) => {
        const level = (JSON.parse(line) as { level: number }).level;
        if (level >= 50) logSink.errors++;
        else if (level >= 40) logSink.warnings++;
      },
    },
  );
  const runtime = await startRuntime({ config, logger, api: true, worker: false });
  onCleanup('gateway runtime', () => runtime.close());

  const url = `${base}/v1/mcp/bench`;
  const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  onCleanup('http agent', () => agent.close());
  const fresh = await Promise.all(
    Array.from({ length: opts.n + opts.warmup }, (_, i) => idp.sign(url, `fresh-${i}`)),
  );
  let next = 0;
  const clients = {
    'api-token': new McpHttpClient(url, agent, { tasks: false, token: API_TOKEN }),
    oauth: new McpHttpClient(url, agent, { tasks: false, token: await idp.sign(url, 'reused') }),
    'oauth-fresh': new McpHttpClient(url, agent, { tasks: false, token: () => fresh[next++] as string }),
  };

  const results: Record<string, unknown>[] = [];
  const rows: Array<Array<string | number>> = [['latency (ms)', 'n', 'p50', 'p99', 'mean', 'max', 'errors']];
  let errors = 0;
  let verdict: 'PASS' | 'FAIL' = 'PASS';
  for (const side of ['oauth', 'oauth-fresh'] as const) {
    if (opts.warmup > 0) await pair(clients['api-token'], clients[side], opts.warmup, opts);
    note(`api-token vs ${side}: ${opts.n} calls per side, concurrency ${opts.concurrency}`);
    const [a, b] = await pair(clients['api-token'], clients[side], opts.n, opts);
    const r = { p50: ratio(percentile(b.latencies, 50), percentile(a.latencies, 50)) };
    const p99 = ratio(percentile(b.latencies, 99), percentile(a.latencies, 99));
    errors += a.errors.length + b.errors.length;
    for (const [name, s] of [[`api-token (vs ${side})`, a] as const, [side, b] as const]) {
      const sum = summarize(s.latencies);
      rows.push([name, sum.count, sum.p50, sum.p99, sum.mean, sum.max, s.errors.length]);
    }
    rows.push([`${side}/api-token`, '', r.p50, p99, '', '', '']);
    if (side === 'oauth' && !(r.p50 <= TARGET_P50)) verdict = 'FAIL';
    results.push({
      side,
      p50Ratio: r.p50,
      p99Ratio: p99,
      apiToken: summarize(a.latencies),
      oauth: summarize(b.latencies),
    });
    for (const e of [...a.errors, ...b.errors].slice(0, 3)) note(`error: ${e}`);
  }
  const totalSeconds = round((performance.now() - t0) / 1000, 1);
  const out = [
    '',
    `bench:oauth  tool work {ms: ${opts.ms}}, ${opts.n} calls per side after ${opts.warmup} warm-up, ` +
      `concurrency ${opts.concurrency}, blocks of ${opts.block} (ABBA)  node ${process.version}, ${os.cpus().length} cpus`,
    '',
    table(rows),
    '',
    `oauth p50 ratio (target <= ${TARGET_P50}): ${verdict}`,
    `errors: ${errors}; gateway log: ${logSink.warnings} warnings, ${logSink.errors} errors`,
    `total ${totalSeconds} s`,
    '',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ options: opts, results, verdict, errors, totalSeconds })}\n`);
}

runBench(main);
