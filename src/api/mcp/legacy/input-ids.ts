/**
 * Ids of the requests the gateway sends a 2025-era client on a response stream: `elicitation/create` for
 * a task's open input, or any input an ordinary call asks for (MRTR, bridged). The client answers with a
 * new POST, which may reach any API replica; the id itself says where the answer goes. It is sealed
 * (AES-256-GCM with the deployment's keys) around its target and the session's nonce, so an answer is
 * accepted only from the session that was asked, and only for that target:
 *
 * - a task's input key: the answer is handed to the task like `tasks/update`;
 * - a waiting call's answer slot: the answer is parked in the store for the replica holding the call.
 */
import type { Cipher } from '../../../store/cipher';
import type { LegacySession } from './session';

const PREFIX = 'mci1.';
const AAD = 'mcp-input-request:v1';

export type InputTarget =
  { kind: 'task'; taskKey: string; inputKey: string } | { kind: 'call'; slot: string };

interface Sealed {
  t?: string;
  k?: string;
  s?: string;
  n: string;
}

export class InputRequestIds {
  constructor(private readonly cipher: Cipher) {}

  idFor(session: LegacySession, target: InputTarget): string {
    const sealed: Sealed =
      target.kind === 'task'
        ? { t: target.taskKey, k: target.inputKey, n: session.nonce }
        : { s: target.slot, n: session.nonce };
    return PREFIX + this.cipher.sealJson(sealed, AAD).toString('base64url');
  }

  /** Where an answer goes, or undefined when the id is not one of ours for this session. */
  open(id: unknown, session: LegacySession): InputTarget | undefined {
    if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > 4096) return undefined;
    try {
      const s = this.cipher.openJson<Sealed>(Buffer.from(id.slice(PREFIX.length), 'base64url'), AAD);
      if (s.n !== session.nonce) return undefined;
      if (s.s !== undefined) return { kind: 'call', slot: s.s };
      return s.t !== undefined && s.k !== undefined
        ? { kind: 'task', taskKey: s.t, inputKey: s.k }
        : undefined;
    } catch {
      return undefined;
    }
  }
}
