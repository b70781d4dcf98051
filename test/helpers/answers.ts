/**
 * Answer contexts for transport-level tests: every answer read on the event loop under one generous
 * `bytes` bound (the bounds themselves are what test/upstream/answer-bounds.test.ts tests).
 */
import type { AnswerContexts } from '../../src/upstream/answers';
import { AnswerParser } from '../../src/upstream/answers';

export function generousAnswers(bytes: number, maxAnswerKeys: number): AnswerContexts {
  return (endpoint) => ({
    parser: new AnswerParser({ offThreadBytes: bytes }),
    bounds: {
      maxBytes: bytes,
      bytesLimit: 'upstreams.maxResponseBytes',
      maxEventBytes: bytes,
      maxAnswerKeys,
    },
    alias: endpoint.alias,
  });
}
