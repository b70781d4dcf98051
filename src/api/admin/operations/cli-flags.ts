/**
 * The admin CLI's flags (`--name value` or `--name=value`) and how they are read (src/main/admin-cli*.ts
 * derive the commands from the operations' table), among them the `[auth]` flags of `upstream add|update`: the upstream's auth settings as the control plane
 * takes them, or undefined when no auth flag was given. On an update, what is not said again is kept:
 * `per_user` stays connected with OAuth unless `--oauth off`, and keeps its token exchange unless
 * `--token-exchange off`; the credential flags give the secret of whichever.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { UpstreamAuthInput } from '../../../store/control-plane';
import type { UpstreamAuth } from '../../../store/control-plane/types';
import type { Flags } from './define';

export class UsageError extends Error {}

export type { Flags };

/**
 * Reads `--name value` / `--name=value` flags with node:util's parseArgs, strictly: a flag not in
 * `known` (a typo, or one of another command) is refused rather than silently ignored.
 */
export function parseFlags(args: string[], known: readonly string[]): Flags {
  const options = Object.fromEntries(known.map((name) => [name, { type: 'string' as const }]));
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return new Map(Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch (err) {
    // parseArgs says what is wrong (an unknown flag, a missing value, a stray argument).
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function need(flags: Flags, name: string): string {
  const v = flags.get(name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function onOff(flags: Flags, name: string): boolean | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  if (['on', 'true', 'yes'].includes(v)) return true;
  if (['off', 'false', 'no'].includes(v)) return false;
  throw new UsageError(`--${name} must be on or off`);
}

export function json(flags: Flags, name: string): Record<string, unknown> | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as Record<string, unknown>;
  } catch {
    throw new UsageError(`--${name} must be JSON`);
  }
}

/**
 * `--hosting JSON` (an upstream's hosting policy, checked by the control plane like the admin API's
 * `hosting`) or `--hosting off` (null: none); undefined when not given.
 */
export function hostingInput(flags: Flags): Record<string, unknown> | null | undefined {
  if (flags.get('hosting') === 'off') return null;
  return json(flags, 'hosting');
}

export function credential(flags: Flags, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = flags.get('credential-env');
  if (fromEnv !== undefined) {
    const v = env[fromEnv];
    if (v === undefined) throw new UsageError(`Environment variable ${fromEnv} is not set`);
    return v;
  }
  const file = flags.get('credential-file');
  if (file !== undefined) return readFileSync(file, 'utf8').trim();
  return flags.get('credential');
}

export function authInput(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  current?: UpstreamAuth,
): UpstreamAuthInput | undefined {
  const [mode, header, id] = [
    flags.get('auth') ?? current?.mode ?? 'none',
    flags.get('header'),
    flags.get('client-id'),
  ];
  const [secret, oauthFlag] = [credential(flags, env), onOff(flags, 'oauth')];
  const exchange = flags.get('token-exchange') === 'off' ? false : json(flags, 'token-exchange');
  const given = [flags.get('auth'), header, secret, id, oauthFlag, exchange];
  if (given.every((v) => v === undefined)) return undefined;
  const base = { mode, ...(header !== undefined && { header }) };
  if (mode !== 'per_user')
    return { ...base, ...(secret !== undefined && { credential: secret }) } as UpstreamAuthInput;
  const kept = current?.mode === 'per_user' ? current.tokenExchange : undefined;
  const tokenExchange =
    exchange === false
      ? undefined
      : (exchange ??
        (kept && {
          issuer: kept.issuer,
          clientId: kept.clientId,
          ...(kept.audience !== undefined && { audience: kept.audience }),
          ...(kept.scope !== undefined && { scope: kept.scope }),
        }));
  if (tokenExchange) {
    return {
      ...base,
      tokenExchange: { ...tokenExchange, ...(secret !== undefined && { clientSecret: secret }) },
    } as UpstreamAuthInput;
  }
  // `--oauth on` (kept on an update unless `--oauth off`); the credential is the client secret.
  const was = current?.mode === 'per_user' ? current.oauth : undefined;
  const clientId = id ?? was?.clientId;
  const oauth = {
    ...(clientId !== undefined && { clientId }),
    ...(secret !== undefined && { clientSecret: secret }),
  };
  return {
    ...base,
    ...((oauthFlag ?? (was !== undefined || id !== undefined)) && { oauth }),
  } as UpstreamAuthInput;
}
