/**
 * The Node flags every gateway process runs with: the Docker image's ENTRYPOINT, `npm start`, `npm run
 * serve`, the benchmarks and the cluster test (test/config/node-flags.test.ts and
 * test/deploy/compose.test.ts hold each of them to this list).
 *
 * `--max-semi-space-size=16`: V8 sizes the young generation from the heap limit. Node 20 gives each
 * isolate semi-spaces of 16 MiB on a host with more than 2 GiB; Node 22 and later up to 64 MiB (192 MiB
 * of young generation, for the main thread and again for the worker's workflow thread). Garbage that
 * young is all the gateway makes between scavenges, so on Node 24 the gateway's RSS with 20,000 tasks in
 * flight was 1.1–1.2 GiB against 0.7 on Node 20 for the same live heap (docs/performance.md, "The young
 * generation on Node 24"). 16 MiB is Node 20's value on such hosts (a flag cannot say "the smaller of
 * the default and 16": on a host with 2 GiB or less this may be above Node's own choice).
 */
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
