/**
 * Ids of the requests the gateway sends a 2025-era client on a response stream (`elicitation/create` for
 * a task's open input). The client answers with a new POST, which may reach any API replica; the id
 * itself says where the answer goes: it is sealed (AES-256-GCM with the deployment's keys) around the
 * task key, the input key and the session's nonce, so an answer is accepted only from the session that
 * was asked, and only for that task and key. Nothing is remembered between the two requests.
 */
import type { Cipher } from '../../../store/cipher';
import type { LegacySession } from './session';

const PREFIX = 'mci1.';
const AAD = 'mcp-input-request:v1';

export interface InputTarget {
  taskKey: string;
  inputKey: string;
}

interface Sealed {
  t: string;
  k: string;
  n: string;
}

export class InputRequestIds {
  constructor(private readonly cipher: Cipher) {}

  idFor(session: LegacySession, target: InputTarget): string {
    const sealed: Sealed = { t: target.taskKey, k: target.inputKey, n: session.nonce };
    return PREFIX + this.cipher.sealJson(sealed, AAD).toString('base64url');
  }

  /** Where an answer goes, or undefined when the id is not one of ours for this session. */
  open(id: unknown, session: LegacySession): InputTarget | undefined {
    if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > 4096) return undefined;
    try {
      const s = this.cipher.openJson<Sealed>(Buffer.from(id.slice(PREFIX.length), 'base64url'), AAD);
      return s.n === session.nonce ? { taskKey: s.t, inputKey: s.k } : undefined;
    } catch {
      return undefined;
    }
  }
}
