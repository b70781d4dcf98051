/** The approval policy's schema and matching (src/config/approvals.ts): pure logic. */
import { ApprovalPolicySchema, needsApproval } from '../../src/config/approvals';

const policy = (input: unknown) => ApprovalPolicySchema.parse(input);

test('defaults: managers approve, one approval, 24 h, no self-approval', () => {
  expect(policy({ rules: [{ tools: ['pay_*'] }] })).toEqual({
    rules: [{ upstream: '*', tools: ['pay_*'], annotations: [] }],
    approvers: { managers: true, users: [], teams: [] },
    selfApproval: false,
    expiresAfterMs: 86_400_000,
    required: 1,
  });
});

test('refuses what could not mean anything: no rules, bad globs, odd counts', () => {
  expect(ApprovalPolicySchema.safeParse({ rules: [] }).success).toBe(false);
  expect(ApprovalPolicySchema.safeParse({ rules: [{ tools: ['a[b'] }] }).success).toBe(false);
  expect(ApprovalPolicySchema.safeParse({ rules: [{ upstream: 'Bad Alias' }] }).success).toBe(false);
  expect(ApprovalPolicySchema.safeParse({ rules: [{}], required: 0 }).success).toBe(false);
  expect(ApprovalPolicySchema.safeParse({ rules: [{}], expiresAfterMs: 10 }).success).toBe(false);
  expect(ApprovalPolicySchema.safeParse({ rules: [{}], extra: true }).success).toBe(false);
});

test('tool names and globs, per upstream or any', () => {
  const p = policy({ rules: [{ upstream: 'bank', tools: ['pay_*', 'refund'] }, { tools: ['delete_repo'] }] });
  expect(needsApproval(p, 'bank', 'pay_invoice', undefined)).toBe(true);
  expect(needsApproval(p, 'bank', 'refund', undefined)).toBe(true);
  expect(needsApproval(p, 'bank', 'balance', undefined)).toBe(false);
  expect(needsApproval(p, 'shop', 'pay_invoice', undefined)).toBe(false);
  expect(needsApproval(p, 'git', 'delete_repo', undefined)).toBe(true);
  expect(needsApproval(undefined, 'bank', 'pay_invoice', undefined)).toBe(false);
});

test('annotations with the spec defaults: destructive unless read-only or said not to be', () => {
  const p = policy({ rules: [{ annotations: ['destructiveHint'] }] });
  expect(needsApproval(p, 'a', 't', undefined)).toBe(true);
  expect(needsApproval(p, 'a', 't', { readOnlyHint: true })).toBe(false);
  expect(needsApproval(p, 'a', 't', { destructiveHint: false })).toBe(false);
  expect(needsApproval(p, 'a', 't', { destructiveHint: true })).toBe(true);
  const open = policy({ rules: [{ annotations: ['openWorldHint'] }] });
  expect(needsApproval(open, 'a', 't', {})).toBe(true);
  expect(needsApproval(open, 'a', 't', { openWorldHint: false })).toBe(false);
});
