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
import { SealedValues } from './sealed';
import type { LegacySession } from './session';

export type InputTarget =
  { kind: 'task'; taskKey: string; inputKey: string } | { kind: 'call'; slot: string };

interface Sealed {
  t?: string;
  k?: string;
  s?: string;
  n: string;
}

export class InputRequestIds {
  private readonly values: SealedValues<Sealed>;

  constructor(cipher: Cipher) {
    this.values = new SealedValues(cipher, 'mci1.', 'mcp-input-request:v1');
  }

  idFor(session: LegacySession, target: InputTarget): string {
    return this.values.seal(
      target.kind === 'task'
        ? { t: target.taskKey, k: target.inputKey, n: session.nonce }
        : { s: target.slot, n: session.nonce },
    );
  }

  /** Where an answer goes, or undefined when the id is not one of ours for this session. */
  open(id: unknown, session: LegacySession): InputTarget | undefined {
    const s = this.values.open(id);
    if (s?.n !== session.nonce) return undefined;
    if (s.s !== undefined) return { kind: 'call', slot: s.s };
    return s.t !== undefined && s.k !== undefined ? { kind: 'task', taskKey: s.t, inputKey: s.k } : undefined;
  }
}

/**
 * SSE event ids of a response whose answer is a durable task (an inline wait, or `tasks/result`): the
 * task, the request being answered and the session. A client that lost the stream resumes it with a GET
 * carrying `Last-Event-ID`, on any replica, and gets the answer.
 */
export interface ResumePoint {
  kind: 'inline' | 'result';
  taskId: string;
  requestId: string | number;
}

export class ResumeTokens {
  private readonly values: SealedValues<ResumePoint & { n: string; q: number }>;
  private seq = 0;

  constructor(cipher: Cipher) {
    this.values = new SealedValues(cipher, 'mce1.', 'mcp-event-id:v1');
  }

  eventId(session: LegacySession, point: ResumePoint): string {
    return this.values.seal({ ...point, n: session.nonce, q: ++this.seq });
  }

  open(lastEventId: string, session: LegacySession): ResumePoint | undefined {
    const v = this.values.open(lastEventId);
    if (v?.n !== session.nonce) return undefined;
    return { kind: v.kind, taskId: v.taskId, requestId: v.requestId };
  }
}
