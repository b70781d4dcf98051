/**
 * bench:floor's options and targets: what each section measures against (issue 23's targets) and the
 * command line that chooses sections, levels and sizes.
 */
import { parseArgs } from 'node:util';

export const TARGET = {
  ordinaryP50: 1.15,
  ordinaryP99: 1.3,
  /** Issue 23: ms the gateway may add to the bare proxy's p50 at 1 in flight. */
  overBareP50Ms: 0.5,
  /** Issue 23: the gateway's requests per second over the bare proxy's at `rateAt` in flight. */
  bareRate: 0.8,
  rateAt: 64,
  creationP50: 3,
  creationP99: 4,
  throughput: 100,
  declaringP50: 1.3,
};

export const SECTIONS = ['ordinary', 'declaring', 'creation', 'throughput'] as const;
export type Section = (typeof SECTIONS)[number];

export interface Options {
  n: number;
  ms: number;
  concurrency: number[];
  users: number;
  sections: Section[];
  /** A checkout whose built gateway runs beside this one in section 1 ("gateway before"). */
  oldRoot?: string;
  seconds: number;
  block: number;
  clients: number;
  burst: number;
  warmup: number;
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '300' },
      ms: { type: 'string', default: '5' },
      concurrency: { type: 'string', default: '1,64' },
      users: { type: 'string', default: '4' },
      sections: { type: 'string', default: SECTIONS.join(',') },
      'old-root': { type: 'string' },
      seconds: { type: 'string', default: '2' },
      block: { type: 'string', default: '25' },
      clients: { type: 'string', default: '32' },
      burst: { type: 'string', default: '300' },
      warmup: { type: 'string', default: '50' },
    },
  });
  const num = (name: keyof typeof values): number => {
    const v = Number(values[name]);
    if (!Number.isFinite(v) || v < 0)
      throw new Error(`--${name} must be a number >= 0 (got ${values[name]})`);
    return v;
  };
  const sections = values.sections.split(',').map((x) => x.trim());
  for (const x of sections) {
    if (!(SECTIONS as readonly string[]).includes(x))
      throw new Error(`--sections must list some of ${SECTIONS.join(', ')} (got ${x})`);
  }
  const concurrency = values.concurrency.split(',').map((c) => Math.floor(Number(c)));
  if (concurrency.some((c) => !Number.isFinite(c) || c < 1))
    throw new Error(`--concurrency must list numbers >= 1 (got ${values.concurrency})`);
  return {
    n: num('n'),
    ms: num('ms'),
    concurrency,
    users: Math.max(1, Math.floor(num('users'))),
    sections: sections as Section[],
    ...(values['old-root'] !== undefined && { oldRoot: values['old-root'] }),
    seconds: num('seconds'),
    block: Math.max(1, num('block')),
    clients: Math.max(1, num('clients')),
    burst: num('burst'),
    warmup: num('warmup'),
  };
}
