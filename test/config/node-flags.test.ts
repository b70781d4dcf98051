/**
 * The gateway's Node flags (src/config/node-flags.ts): every way the project starts a gateway passes them
 * (the image's entry point is checked with the rest of the Compose topology in test/deploy/compose.test.ts),
 * and on the Node running this test they cap what V8 would otherwise give the young generation. A unit
 * test, so CI runs it on Node 20, 22 and 24, where the defaults differ.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../../src/config/node-flags';

const ROOT = path.join(__dirname, '../..');

/** The heap limit V8 sets for these flags, in MiB: the old generation's plus the young generation's. */
function heapLimitMiB(flags: readonly string[]): number {
  const out = execFileSync(
    process.execPath,
    [...flags, '-p', "require('node:v8').getHeapStatistics().heap_size_limit / 2 ** 20"],
    { encoding: 'utf8' },
  );
  return Number(out.trim());
}

test('npm start and npm run serve run node with them', () => {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const flags = GATEWAY_NODE_FLAGS.join(' ');
  expect(scripts['start']).toMatch(new RegExp(`&& node ${flags} dist/src/main/start\\.js$`));
  expect(scripts['serve']).toMatch(new RegExp(`&& node ${flags} dist/src/main/serve\\.js$`));
});

test('they hold the young generation to three 16 MiB semi-spaces, whatever this Node would choose', () => {
  // A fixed old generation, so the limit's remainder is the young generation's (three semi-spaces).
  const old = ['--max-old-space-size=1024'];
  // Without them: 48 MiB on Node 20 (on a host with more than 2 GiB), 192 on Node 24.
  expect(heapLimitMiB([...old, ...GATEWAY_NODE_FLAGS])).toBe(1024 + 3 * 16);
});
