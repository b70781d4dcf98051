/**
 * The CLI's flag groups: flags read together into one input key where the command line says it
 * differently from the API's body (an upstream's auth, a credential from the environment or a file, an
 * approval policy from a file).
 */
import { readFileSync } from 'node:fs';
import { authInput, credential, json, UsageError } from './cli-flags';
import type { FlagGroup } from './define';

export const CREDENTIAL_HELP =
  'credential: --credential-env VAR | --credential-file FILE | --credential VALUE (visible in ps)';
const CREDENTIAL_FLAGS = ['credential-env', 'credential-file', 'credential'] as const;

/** `<credential>`: the authorization's secret, required. */
export const credentialGroup: FlagGroup = {
  label: '<credential>',
  flags: CREDENTIAL_FLAGS,
  help: [CREDENTIAL_HELP],
  keys: ['credential'],
  read(flags, { env }) {
    const secret = credential(flags, env);
    if (secret === undefined) throw new UsageError('a credential is required (--credential-env, ...)');
    return { credential: secret };
  },
};

const AUTH_HELP = [
  'auth:       --auth none|project|per_user  [--header NAME]  [<credential>]',
  '            per_user connected with OAuth: --oauth on|off  [--client-id ID]  [<credential>: its secret]',
  '            per_user by token exchange: --token-exchange {"issuer","clientId","audience"?,"scope"?}|off',
  CREDENTIAL_HELP,
];

/**
 * `[auth]` of `upstream add|update`: the auth settings as the control plane takes them. On an update
 * what is not said again is kept (cli-flags.ts, authInput), so the current settings are read first.
 */
export function authGroup(update: boolean): FlagGroup {
  return {
    label: '[auth]',
    flags: ['auth', 'header', 'oauth', 'client-id', 'token-exchange', ...CREDENTIAL_FLAGS],
    help: AUTH_HELP,
    keys: ['auth'],
    async read(flags, { cp, actor, env }) {
      const project = flags.get('project') as string;
      const current = update
        ? (await cp.listUpstreams(actor, project)).find((u) => u.alias === flags.get('alias'))
        : undefined;
      return { auth: authInput(flags, env, current?.auth) };
    },
  };
}

/** `--file F` (a JSON file) or `--policy JSON`, exactly one; checked by the control plane like the API's body. */
export const policyGroup: FlagGroup = {
  label: '--file F | --policy JSON',
  flags: ['file', 'policy'],
  help: ['policy:     --file F (a JSON file) | --policy JSON: the whole approval policy (docs/approvals.md)'],
  keys: ['policy'],
  read(flags) {
    const file = flags.get('file');
    if ((file === undefined) === (flags.get('policy') === undefined))
      throw new UsageError('approval-policy set needs --file F or --policy JSON (one of them)');
    const parsed = file === undefined ? json(flags, 'policy') : jsonFile(file);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError('The approval policy must be a JSON object');
    return { policy: parsed };
  },
};

function jsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--file: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError('--file must be JSON');
  }
}
