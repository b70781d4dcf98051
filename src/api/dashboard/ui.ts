/**
 * Serves the dashboard's single page and its assets from src/api/dashboard/ui (plain HTML, CSS and one
 * JavaScript module: no build step, no third-party code, nothing fetched from elsewhere). A strict
 * Content-Security-Policy allows only the gateway's own scripts, styles and API.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';

const UI_DIR = path.join(__dirname, 'ui');
const ASSET_PREFIX = '/dashboard/assets/';

const ASSETS: Record<string, { file: string; type: string }> = {
  'app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  'app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  'favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

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

export function dashboardUi(): Middleware {
  // Read once: the files are part of the release, not user content.
  const index = readFileSync(path.join(UI_DIR, 'index.html'));
  const assets = new Map(
    Object.entries(ASSETS).map(([name, a]) => [
      name,
      { body: readFileSync(path.join(UI_DIR, a.file)), type: a.type },
    ]),
  );
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
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = index;
  };
}
