/**
 * The secrets of a deployment. The encryption keyring from the environment (TASKROUTER_ENCRYPTION_KEYS as
 * "id:base64,id:base64" and TASKROUTER_ENCRYPTION_ACTIVE_KEY) in production; for the embedded default,
 * a key file created once under .data/ with owner-only permissions. The PostgreSQL store's URL, which
 * holds a password, from TASKROUTER_POSTGRES_URL, so that configuration files carry no credentials.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ConfigInput } from '../config/config';
import type { Keyring } from '../store/cipher';
import { generateKey } from '../store/cipher';

export function keyringFromEnv(env: NodeJS.ProcessEnv): Keyring | undefined {
  const raw = env['TASKROUTER_ENCRYPTION_KEYS'];
  if (!raw) return undefined;
  const keys: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    const at = pair.indexOf(':');
    if (at <= 0) throw new Error('TASKROUTER_ENCRYPTION_KEYS must look like "id:base64key,id2:base64key"');
    keys[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  const activeKeyId = env['TASKROUTER_ENCRYPTION_ACTIVE_KEY'] ?? Object.keys(keys)[0];
  if (!activeKeyId) throw new Error('TASKROUTER_ENCRYPTION_KEYS is empty');
  return { activeKeyId, keys };
}

/** A configuration file's content with the keyring and the PostgreSQL URL of the environment, when set. */
export function withSecretsFromEnv(input: ConfigInput, env: NodeJS.ProcessEnv): ConfigInput {
  const keyring = keyringFromEnv(env);
  const postgresUrl = env['TASKROUTER_POSTGRES_URL'];
  return {
    ...input,
    ...(keyring && { encryption: keyring }),
    ...(postgresUrl && { store: { ...input.store, postgresUrl } }),
  };
}

export function keyringFromFile(file: string): Keyring {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const keyring: Keyring = { activeKeyId: 'k1', keys: { k1: generateKey() } };
    writeFileSync(file, JSON.stringify(keyring, null, 2), { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return JSON.parse(readFileSync(file, 'utf8')) as Keyring;
}
