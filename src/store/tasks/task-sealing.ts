/**
 * What of a task row is encrypted, and under which associated data: the status message and the status
 * detail. Each ciphertext is bound to its task and column, so one copied to another row does not open.
 */
import type { TaskSnapshot } from '../../protocol';
import type { Cipher } from '../cipher';

/** The encrypted part of a snapshot: status detail and the upstream's re-published metadata. */
export type TaskDetail = Pick<TaskSnapshot, 'inputRequests' | 'result' | 'error' | 'meta' | 'extensions'>;

export class TaskSealing {
  constructor(private readonly cipher: Cipher) {}

  /**
   * Status messages are the upstream's free text and may echo arguments or results, so they are payload,
   * not metadata: stored encrypted (as text, so both databases keep one column type).
   */
  sealMessage(taskKey: string, message: string | undefined): string | null {
    if (message === undefined) return null;
    return `enc:${this.cipher.seal(Buffer.from(message, 'utf8'), messageAad(taskKey)).toString('base64')}`;
  }

  openMessage(taskKey: string, stored: string | null): string | undefined {
    if (stored === null) return undefined;
    if (!stored.startsWith('enc:')) return stored;
    return this.cipher.open(Buffer.from(stored.slice(4), 'base64'), messageAad(taskKey)).toString('utf8');
  }

  sealDetail(taskKey: string, s: TaskSnapshot): Buffer | null {
    const detail: TaskDetail = {
      ...(s.inputRequests && { inputRequests: s.inputRequests }),
      ...(s.result && { result: s.result }),
      ...(s.error && { error: s.error }),
      ...(s.meta && { meta: s.meta }),
      ...(s.extensions && { extensions: s.extensions }),
    };
    return Object.keys(detail).length === 0 ? null : this.cipher.sealJson(detail, detailAad(taskKey));
  }

  /** The stored detail; empty when none was written or retention has dropped it. */
  openDetail(taskKey: string, stored: Buffer | null): TaskDetail {
    return stored ? this.cipher.openJson<TaskDetail>(stored, detailAad(taskKey)) : {};
  }
}

function messageAad(taskKey: string): string {
  return `task:${taskKey}:status-message`;
}

function detailAad(taskKey: string): string {
  return `task:${taskKey}:detail`;
}
