/** What an approval request shows of its call's arguments (gateway/calls/approval-call.ts, argumentsDigest). */
import { Cipher } from '../../src/store/cipher';
import { canonicalJson } from '../../src/gateway/responses/result-cache';
import type { TestGateway } from './gateway';

export function approvalDigest(gw: TestGateway, args: Record<string, unknown>): string {
  return new Cipher(gw.config.encryption).digest('approval arguments', canonicalJson(args));
}
