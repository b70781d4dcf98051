/**
 * The script of the upstream client's answer threads (src/upstream/answer-threads.ts): parses a large
 * answer, checks its bounds and, for a `tools/call` on the ordinary path, applies the gateway's response
 * processing (answer-preparation.ts) there, so the event loop only ever holds what the client receives.
 */
import { parentPort } from 'node:worker_threads';
import type { ParseJob, ParseOutcome } from '../upstream/answer-parse';
import { parseAnswer } from '../upstream/answer-parse';
import { prepareAnswer, refusalOf } from './answer-preparation';

const port = parentPort;
if (port) {
  port.on('message', (m: { id: number; input: Uint8Array | string; job: ParseJob }) => {
    let outcome: ParseOutcome;
    try {
      outcome = parseAnswer(m.input, m.job, { prepare: prepareAnswer, refusalOf });
    } catch {
      // A fault in the processing itself: the call fails, the thread stays.
      outcome = {
        ok: false,
        reason: 'refused',
        refusal: { kind: 'InternalError', message: 'The upstream answer could not be processed' },
      };
    }
    port.postMessage({ id: m.id, outcome });
  });
}
