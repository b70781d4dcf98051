// The sign-in page: a user token is exchanged for a session cookie; the token is not kept by the browser.
// When the gateway offers sign-in through its OpenID issuer (docs/oauth.md), a button starts that flow
// (a plain navigation: the gateway redirects to the issuer and back), and a failed attempt comes back
// here with its reason in `?sso_error=`.
import type { SessionView, SsoView } from '../../view-types';
import { api, messageOf } from '../api.js';
import { h, replace } from '../dom.js';
import { setCrumbs } from '../frame.js';
import { go } from '../nav.js';
import { state } from '../state.js';

export function renderSignIn(main: HTMLElement): void {
  setCrumbs();
  document.title = 'Sign in · TaskRouter';
  const error = h('p', { class: 'field-error', role: 'alert' });
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'trp_…',
  });
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        try {
          const session = await api<SessionView>('POST', '/v1/session', { token: input.value.trim() });
          state.user = session.user;
          state.csrf = session.csrfToken ?? null;
          input.value = '';
          go('#/');
        } catch (err) {
          error.textContent = messageOf(err);
          input.focus();
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'Use your personal access token (trp_…). It is exchanged for a browser session; the token is not stored by the browser.',
    ),
    h('label', { for: 'token' }, 'User token'),
    input,
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  replace(main, form);
  input.focus();
  void offerSso(form, error);
}

async function offerSso(form: HTMLFormElement, error: HTMLElement): Promise<void> {
  const failed = new URLSearchParams(location.search).get('sso_error');
  if (failed) {
    error.textContent = failed;
    history.replaceState(null, '', `${location.pathname}${location.hash}`);
  }
  let sso: SsoView;
  try {
    sso = await api<SsoView>('GET', '/v1/session/sso');
  } catch {
    return; // not configured
  }
  form.append(
    h('p', { class: 'muted' }, 'or'),
    h('button', { type: 'button', onclick: () => location.assign('/v1/session/sso/start') }, sso.label),
  );
}
