/**
 * The dashboard's page and assets as src/api/dashboard/ui.ts serves them: the browser modules compiled
 * from the TypeScript sources (dist/browser/, compiled by the test setup), the stylesheets and icon from
 * the source folder, each by its exact name with the strict CSP; the TypeScript, its tsconfig and the
 * server's view types are never served.
 */
import type { Server } from 'node:http';
import Koa from 'koa';
import { dashboardUi } from '../../src/api/dashboard/ui';

let server: Server;
let base: string;

beforeAll(async () => {
  const app = new Koa();
  app.use(dashboardUi());
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('the compiled modules, stylesheets and icon are served by exact name with the CSP', async () => {
  const expected: Array<[string, string]> = [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['pages/tasks.js', 'text/javascript; charset=utf-8'],
    ['pages/approval-detail.js', 'text/javascript; charset=utf-8'],
    ['base.css', 'text/css; charset=utf-8'],
    ['favicon.svg', 'image/svg+xml'],
  ];
  for (const [name, type] of expected) {
    const res = await fetch(`${base}/dashboard/assets/${name}`);
    expect([name, res.status, res.headers.get('content-type')]).toEqual([name, 200, type]);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = await res.text();
    if (name.endsWith('.js')) {
      // Compiled: ES module imports of the .js modules, no TypeScript left.
      expect(body).not.toMatch(/import type|: HTMLElement\b/);
    }
  }
  const app = await (await fetch(`${base}/dashboard/assets/app.js`)).text();
  expect(app).toContain("from './render.js'");
});

test('sources, configuration and anything not an asset are not served', async () => {
  // `..%2F`: a slash the URL parser leaves alone (a plain `../` never reaches the server).
  const names = ['app.ts', 'pages/tasks.ts', 'tsconfig.json', 'index.html', 'nope.js', '..%2Fview-types.js'];
  for (const name of names) {
    const res = await fetch(`${base}/dashboard/assets/${name}`);
    expect([name, res.status]).toEqual([name, 404]);
  }
  const page = await fetch(`${base}/dashboard/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<script type="module" src="/dashboard/assets/app.js"></script>');
});
