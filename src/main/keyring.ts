/**
 * The encryption keyring of a deployment. From the environment (TASKROUTER_ENCRYPTION_KEYS as
 * "id:base64,id:base64" and TASKROUTER_ENCRYPTION_ACTIVE_KEY) in production; for the embedded default,
 * a key file created once under .data/ with owner-only permissions.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
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

export function keyringFromFile(file: string): Keyring {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const keyring: Keyring = { activeKeyId: 'k1', keys: { k1: generateKey() } };
    writeFileSync(file, JSON.stringify(keyring, null, 2), { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  return JSON.parse(readFileSync(file, 'utf8')) as Keyring;
}
