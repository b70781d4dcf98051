import { HostingPolicySchema, isHosted, mayRepeat, unmatchedRules } from '../../src/config/hosting';

const policy = (input: unknown) => HostingPolicySchema.parse(input);

describe('hosting policy', () => {
  it('fills its defaults', () => {
    expect(policy({})).toEqual({
      tools: [],
      promoteAfterMs: 2000,
      repeatable: [],
      callDeadlineMs: 3_600_000,
    });
  });

  it('hosts tools by name and by glob, and nothing else', () => {
    const p = policy({ tools: ['build', 'report_*', 'crawl-{site,page}'] });
    expect(isHosted(p, 'build')).toBe(true);
    expect(isHosted(p, 'report_daily')).toBe(true);
    expect(isHosted(p, 'crawl-page')).toBe(true);
    expect(isHosted(p, 'builds')).toBe(false);
    expect(isHosted(p, 'crawl-web')).toBe(false);
    expect(isHosted(undefined, 'build')).toBe(false);
  });

  it('repeats annotated tools unless the operator says never, and named tools whatever their hints', () => {
    const p = policy({ tools: ['*'], repeatable: ['fetch_*', '!lookup'] });
    expect(mayRepeat(p, 'fetch_page')).toBe(true);
    expect(mayRepeat(p, 'search', { readOnlyHint: true })).toBe(true);
    expect(mayRepeat(p, 'upsert', { idempotentHint: true })).toBe(true);
    expect(mayRepeat(p, 'lookup', { readOnlyHint: true })).toBe(false);
    expect(mayRepeat(p, 'send_mail')).toBe(false);
    expect(mayRepeat(p, 'send_mail', { readOnlyHint: false, idempotentHint: false })).toBe(false);
  });

  it('reports rules that match no current tool', () => {
    const p = policy({ tools: ['build', 'gone_*'], repeatable: ['!nothing'] });
    expect(unmatchedRules(p, ['build', 'test'])).toEqual(['gone_*', 'nothing']);
  });

  it.each([
    [{ tools: ['has space'] }, 'tools.0'],
    [{ tools: ['[a-'] }, 'tools.0'],
    [{ tools: 'build' }, 'tools'],
    [{ promoteAfterMs: -1 }, 'promoteAfterMs'],
    [{ promoteAfterMs: 1.5 }, 'promoteAfterMs'],
    [{ maxConcurrent: 0 }, 'maxConcurrent'],
    [{ callDeadlineMs: 999 }, 'callDeadlineMs'],
    [{ repeatable: ['!'] }, 'repeatable.0'],
    [{ tool: ['x'] }, ''],
  ])('refuses %j naming the field', (input, path) => {
    const r = HostingPolicySchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path);
  });
});
