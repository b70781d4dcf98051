/**
 * The script of the upstream client's answer threads (src/upstream/answer-threads.ts): parses a large
 * answer, checks its bounds and, for a `tools/call` on the ordinary path, applies the gateway's response
 * processing (answer-preparation.ts) there, so the event loop only ever holds what the client receives.
 */
import { parentPort } from 'node:worker_threads';
import type { ParseJob, ParseOutcome } from '../../upstream/answer-parse';
import { parseAnswer } from '../../upstream/answer-parse';
import { prepareAnswer, refusalOf } from './answer-preparation';

type Message =
  | { id: number; op: 'parse'; input: Uint8Array | string; job: ParseJob }
  | { id: number; op: 'chunks'; list: Uint8Array[] }
  | { id: number; op: 'end'; job: ParseJob }
  | { id: number; op: 'drop' };

/** Bodies arriving chunk by chunk, by job id. */
const bodies = new Map<number, Uint8Array[]>();

function run(input: Uint8Array | string, job: ParseJob): ParseOutcome {
  try {
    return parseAnswer(input, job, { prepare: prepareAnswer, refusalOf });
  } catch {
    // A fault in the processing itself: the call fails, the thread stays.
    return {
      ok: false,
      reason: 'refused',
      refusal: { kind: 'InternalError', message: 'The upstream answer could not be processed' },
    };
  }
}

const port = parentPort;
if (port) {
  port.on('message', (m: Message) => {
    switch (m.op) {
      case 'parse':
        port.postMessage({ id: m.id, outcome: run(m.input, m.job) });
        return;
      case 'chunks': {
        const chunks = bodies.get(m.id) ?? [];
        chunks.push(...m.list);
        bodies.set(m.id, chunks);
        return;
      }
      case 'end': {
        const chunks = bodies.get(m.id) ?? [];
        bodies.delete(m.id);
        port.postMessage({ id: m.id, outcome: run(Buffer.concat(chunks), m.job) });
        return;
      }
      case 'drop':
        bodies.delete(m.id);
        return;
    }
  });
}
