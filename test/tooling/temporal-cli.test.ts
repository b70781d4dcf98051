import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../src/tooling/temporal-cli';

describe('resolveTemporalCli', () => {
  const saved = process.env['TEMPORAL_CLI_PATH'];
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-cli-test-'));
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['TEMPORAL_CLI_PATH'];
    else process.env['TEMPORAL_CLI_PATH'] = saved;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prefers TEMPORAL_CLI_PATH when it points to an executable', async () => {
    const fake = path.join(dir, 'my-temporal');
    writeFileSync(fake, '#!/bin/sh\necho fake\n');
    chmodSync(fake, 0o755);
    process.env['TEMPORAL_CLI_PATH'] = fake;
    await expect(resolveTemporalCli()).resolves.toBe(fake);
  });

  it('rejects a TEMPORAL_CLI_PATH that is not executable instead of silently falling back', async () => {
    const notExe = path.join(dir, 'not-executable');
    writeFileSync(notExe, 'nope');
    chmodSync(notExe, 0o644);
    process.env['TEMPORAL_CLI_PATH'] = notExe;
    await expect(resolveTemporalCli()).rejects.toThrow(/TEMPORAL_CLI_PATH/);

    process.env['TEMPORAL_CLI_PATH'] = path.join(dir, 'missing');
    await expect(resolveTemporalCli()).rejects.toThrow(/not an executable file/);
  });

  it('finds the installed CLI without the env override (global setup installed it)', async () => {
    delete process.env['TEMPORAL_CLI_PATH'];
    await expect(resolveTemporalCli()).resolves.toMatch(/temporal(\.exe)?$/);
  });
});
