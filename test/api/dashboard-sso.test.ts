/**
 * Dashboard sign-in through the OpenID issuer (docs/oauth.md), in the real headless Chromium: the
 * sign-in page offers the issuer, the provider (oidc-provider in a child process) shows its login form,
 * and the browser comes back signed in as the provisioned user, whose group made them a team member.
 */
import type { Browser } from 'playwright-core';
import { launchChromium, watchPage } from '../helpers/browser';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import type { OidcProvider } from '../helpers/oidc';
import { freePort, startOidcProvider } from '../helpers/oidc';

let idp: OidcProvider;
let gw: TestGateway;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({
    users: { alice: { name: 'Alice Example', groups: ['devs'] }, erin: { groups: [] } },
    clients: [
      {
        client_id: 'taskrouter-dashboard',
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${base}/v1/session/sso/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
  });
  gw = await startTestGateway({
    config: {
      http: { host: '127.0.0.1', port, publicBaseUrl: base },
      oauth: {
        issuers: [{ issuer: idp.issuer, groupTeams: { devs: 'core' } }],
        dashboard: {
          issuer: idp.issuer,
          clientId: 'taskrouter-dashboard',
          scopes: ['openid', 'profile', 'groups'],
          label: 'Sign in with Test IdP',
        },
      },
    },
    projects: () => [],
    bootstrap: (url) => {
      return {
        teams: [{ slug: 'core', members: [] }],
        projects: [
          { slug: 'board', team: 'core', namespacing: false, upstreams: [{ alias: 'example', url }] },
        ],
      };
    },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await idp?.close();
});

test('signing in through the issuer opens a session as the provisioned user, with the team of their group', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const seen = watchPage(page, base);
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('button', { name: 'Sign in with Test IdP' }).click();
  // The provider's own login page (another origin).
  await page.getByLabel('Username').fill('alice');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.getByRole('link', { name: 'board' }).waitFor();
  expect(await page.locator('#who').textContent()).toContain('alice');
  expect(seen.errors).toEqual([]);
  // Only the issuer besides the gateway, and only for the sign-in itself.
  expect(seen.foreignRequests.every((u) => u.startsWith(idp.issuer))).toBe(true);
  // The session cookie is the token sign-in's (HttpOnly, Strict); the flow cookie is gone.
  const cookies = await context.cookies(base);
  const session = cookies.find((c) => c.name === 'taskrouter_session');
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  expect(cookies.find((c) => c.name === 'taskrouter_sso')).toBeUndefined();
  const me = await fetch(`${base}/v1/session`, {
    headers: { cookie: `taskrouter_session=${session?.value}` },
  });
  expect(me.status).toBe(200);
  expect(((await me.json()) as { user: unknown }).user).toMatchObject({
    handle: 'alice',
    name: 'Alice Example',
  });
  // A state-changing request on that session still needs its CSRF token.
  const signOut = await fetch(`${base}/v1/session`, {
    method: 'DELETE',
    headers: { cookie: `taskrouter_session=${session?.value}` },
  });
  expect(signOut.status).toBe(403);
  await context.close();
});

test('a callback the browser did not start is refused and lands on the sign-in page with the reason', async () => {
  const res = await fetch(`${base}/v1/session/sso/callback?code=abc&state=forged`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(String(res.headers.get('location')), base);
  expect(location.pathname).toBe('/dashboard/');
  expect(location.searchParams.get('sso_error')).toBe('The sign-in was not started here');
  expect(
    res.headers
      .getSetCookie()
      .some((c) => c.startsWith('taskrouter_session=') && !c.startsWith('taskrouter_session=;')),
  ).toBe(false);

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(location.toString());
  await page.getByRole('alert').filter({ hasText: 'The sign-in was not started here' }).waitFor();
  await context.close();
});

test('the sign-in page learns the button label from /v1/session/sso', async () => {
  const res = await fetch(`${base}/v1/session/sso`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ label: 'Sign in with Test IdP' });
});
