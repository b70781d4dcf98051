// The page around every view: who is signed in (with Sign out) and the breadcrumbs in the top bar.
import { api } from './api.js';
import { h, replace } from './dom.js';
import { go } from './nav.js';
import { state } from './state.js';

export function renderWho() {
  const who = document.getElementById('who');
  if (!state.user) return replace(who);
  replace(
    who,
    h('span', { class: 'muted' }, 'Signed in as '),
    h('strong', { 'data-testid': 'whoami' }, state.user.handle),
    h(
      'button',
      {
        type: 'button',
        class: 'link-button',
        onclick: async () => {
          await api('DELETE', '/v1/session').catch(() => undefined);
          state.user = null;
          state.csrf = null;
          go('#/signin');
        },
      },
      'Sign out',
    ),
  );
}

export function setCrumbs(...items) {
  const crumbs = document.getElementById('crumbs');
  replace(
    crumbs,
    h(
      'ol',
      {},
      items.map((item, i) =>
        h(
          'li',
          {},
          i === items.length - 1
            ? h('span', { 'aria-current': 'page' }, item.label)
            : h('a', { href: item.href }, item.label),
        ),
      ),
    ),
  );
}
