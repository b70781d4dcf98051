/**
 * The benches' command lines: each bench declares its flags and their defaults in one object, and reads the
 * values back through one typed reader, so that every bench checks its numbers the same way and says the same
 * thing when one is wrong (`--name must be a number >= N (got raw)`).
 */
import { parseArgs } from 'node:util';

/** Each flag: its default (a string flag), `undefined` (a string flag without one) or `false` (a boolean flag). */
export type FlagSpec = Record<string, string | undefined | false>;

export type FlagValues<S extends FlagSpec> = {
  [K in keyof S]: S[K] extends string ? string : S[K] extends false ? boolean : string | undefined;
};

/** The flags of a spec that always hold a string (they have a default). */
type StringFlag<S extends FlagSpec> = { [K in keyof S]: S[K] extends string ? K : never }[keyof S] & string;

export interface Flags<S extends FlagSpec> {
  values: FlagValues<S>;
  /** `--name` as a number >= min. */
  num(name: StringFlag<S>, min: number): number;
  /** `--name` as a number >= min, rounded down. */
  int(name: StringFlag<S>, min: number): number;
  /** `--name` as a number in [min, max] (the message names the range). */
  range(name: StringFlag<S>, min: number, max?: number): number;
  /** `--name` as a whole number >= min (a fraction is refused rather than rounded). */
  whole(name: StringFlag<S>, min: number): number;
  /** `--name` as a comma-separated list, each item trimmed, empty ones dropped. */
  list(name: StringFlag<S>): string[];
  /** `--name` as a comma-separated list of numbers >= min, each rounded down. */
  ints(name: StringFlag<S>, min: number): number[];
}

/** `raw` as a number >= min, or the benches' one error for a number that is not. */
export function numberAtLeast(name: string, raw: string, min: number): number {
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) throw new Error(`--${name} must be a number >= ${min} (got ${raw})`);
  return v;
}

/** An optional flag's value (one without a default) as a whole number >= 0. */
export function wholeNumber(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be a whole number`);
  return n;
}

/** An optional flag's `on` or `off`. */
export function onOff(value: string, flag: string): boolean {
  if (value !== 'on' && value !== 'off') throw new Error(`${flag} must be on or off`);
  return value === 'on';
}

/**
 * Parses `argv` against `spec` (strictly: an unknown flag is an error). With `usage`, `--help` prints it and exits.
 */
export function readFlags<const S extends FlagSpec>(argv: string[], spec: S, usage?: string): Flags<S> {
  const options: Record<string, { type: 'string' | 'boolean'; default?: string | boolean }> = {};
  for (const [name, d] of Object.entries(spec)) {
    options[name] =
      d === false
        ? { type: 'boolean', default: false }
        : { type: 'string', ...(d !== undefined && { default: d }) };
  }
  if (usage !== undefined) options.help = { type: 'boolean', default: false };
  const { values } = parseArgs({ args: argv, options });
  if (usage !== undefined && values.help === true) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const str = (name: string): string => String(values[name]);
  const list = (name: string): string[] =>
    str(name)
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  return {
    values: values as FlagValues<S>,
    num: (name, min) => numberAtLeast(name, str(name), min),
    int: (name, min) => Math.floor(numberAtLeast(name, str(name), min)),
    range: (name, min, max = Infinity) => {
      const v = Number(str(name));
      if (!Number.isFinite(v) || v < min || v > max) {
        throw new Error(`--${name} must be a number in [${min}, ${max}] (got ${str(name)})`);
      }
      return v;
    },
    whole: (name, min) => {
      const v = Number(str(name));
      if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be a whole number >= ${min}`);
      return v;
    },
    list,
    ints: (name, min) => list(name).map((x) => Math.floor(numberAtLeast(name, x, min))),
  };
}
