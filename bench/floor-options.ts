/**
 * bench:floor's options and targets: what each section measures against (issue 23's targets) and the
 * command line that chooses sections, levels and sizes.
 */
import { readFlags } from './options';

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
  const flags = readFlags(argv, {
    n: '300',
    ms: '5',
    concurrency: '1,64',
    users: '4',
    sections: SECTIONS.join(','),
    'old-root': undefined,
    seconds: '2',
    block: '25',
    clients: '32',
    burst: '300',
    warmup: '50',
  });
  const { values } = flags;
  const num = (name: Parameters<typeof flags.num>[0]): number => flags.num(name, 0);
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
