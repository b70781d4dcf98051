/**
 * Serves the dashboard's single page and its assets: the HTML, CSS and icon from src/api/dashboard/ui
 * (copied next to the compiled code in dist/), and the browser modules compiled from the TypeScript
 * there into dist/browser/ (scripts/build-ui.mjs, run by `npm run build` and the test setup). No
 * third-party code, nothing fetched from elsewhere; a strict Content-Security-Policy allows only the
 * gateway's own scripts, styles and API.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import { findRepoRoot } from '../../config/paths';

const UI_DIR = path.join(__dirname, 'ui');
/** The compiled browser modules, from src/ (tests, tsx) and from dist/ alike. */
const SCRIPTS_DIR = path.join(findRepoRoot(__dirname), 'dist', 'browser', 'api', 'dashboard', 'ui');
const ASSET_PREFIX = '/dashboard/assets/';

/** What is served as an asset, by file ending; anything else in the folders (index.html, .ts) is not. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
}

/**
 * Every asset in the folder and its subfolders, by its path below the folder (`pages/tasks.js`). Only
 * these exact names are served, so a request cannot reach anything else; links are not followed.
 */
function readAssets(dir: string, prefix = ''): Array<[string, Asset]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): Array<[string, Asset]> => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return readAssets(file, `${prefix}${entry.name}/`);
    const type = CONTENT_TYPES[path.extname(entry.name)];
    if (!entry.isFile() || type === undefined) return [];
    return [[`${prefix}${entry.name}`, { body: readFileSync(file), type }]];
  });
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** Why the page cannot be served: the browser modules were never compiled. */
const NOT_BUILT =
  'The dashboard is not built: its browser code is compiled by `npm run build` (scripts/build-ui.mjs).\n';

export function dashboardUi(): Middleware {
  // Read once: the files are part of the release, not user content.
  const index = readFileSync(path.join(UI_DIR, 'index.html'));
  const built = existsSync(path.join(SCRIPTS_DIR, 'app.js'));
  const assets = new Map([...readAssets(UI_DIR), ...(built ? readAssets(SCRIPTS_DIR) : [])]);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/' || ctx.path === '/dashboard') {
      ctx.redirect('/dashboard/');
      return;
    }
    if (!ctx.path.startsWith('/dashboard/')) return next();
    ctx.set(SECURITY_HEADERS);
    if (ctx.path.startsWith(ASSET_PREFIX)) {
      const asset = assets.get(ctx.path.slice(ASSET_PREFIX.length));
      if (!asset) return next();
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = asset.body;
      return;
    }
    // Every other /dashboard/ path is the single page (it routes on the URL fragment).
    if (!built) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = NOT_BUILT;
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = index;
  };
}
