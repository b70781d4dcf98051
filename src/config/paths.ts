/** Where the project lives on disk: entry points and tooling find `.data/` and `.tools/` from here. */
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Walks up from this file to the first directory containing package.json. Works both from `src/config`
 * (tsx, ts-jest) and from a compiled `dist/src/config`, since `dist` itself has no package.json.
 */
export function findRepoRoot(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Could not find package.json above ${startDir}`);
    dir = parent;
  }
}
