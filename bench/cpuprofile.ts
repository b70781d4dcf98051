/**
 * `node --import tsx bench/cpuprofile.ts <file.cpuprofile> [--top 25]`
 *
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. the gateway's with
 * `BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'`): self time by function and by module
 * (an npm package, a file of the project's `dist/`, Node's internals, or V8's `(garbage collector)`,
 * `(program)` and `(idle)`), as ms and as a share of the busy time (everything but idle). Self time is
 * where the CPU was when sampled, so a function's callees are not counted in it.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { round, table } from './support';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: a package, a project file, Node's internals or a V8 pseudo-frame. */
export function moduleOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:' + (url.slice(5).split('/')[0] ?? '');
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? url);
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

export function summariseProfile(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += ms;
    if (functionName === '(idle)') idle += ms;
    const m = moduleOf(url, functionName);
    const key = `${functionName || '(anonymous)'}  ${m}${url ? `:${lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + ms);
    mod.set(m, (mod.get(m) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { totalMs: total, idleMs: idle, busyMs: total - idle, functions: sorted(fn), modules: sorted(mod) };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: bench/cpuprofile.ts <file.cpuprofile> [--top 25]');
  const top = Number(values.top);
  const s = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile);
  const share = (ms: number) => `${round((100 * ms) / s.busyMs, 1)}%`;
  const rows = (entries: Array<[string, number]>) =>
    entries.filter(([k]) => k !== '(idle)' && !k.startsWith('(idle)')).slice(0, top);
  process.stdout.write(
    `${file}: ${round(s.totalMs / 1000, 1)} s sampled, busy ${round(s.busyMs / 1000, 1)} s ` +
      `(idle ${round(s.idleMs / 1000, 1)} s)\n\nself time by module\n` +
      table([
        ['module', 'self ms', '% busy'],
        ...rows(s.modules).map(([k, ms]) => [k, round(ms, 0), share(ms)]),
      ]) +
      '\n\nself time by function\n' +
      table([
        ['function  module:line', 'self ms', '% busy'],
        ...rows(s.functions).map(([k, ms]) => [k, round(ms, 0), share(ms)]),
      ]) +
      '\n',
  );
}

if (require.main === module) main();
