// The viewer's connections to the project's per-user upstreams (docs/oauth.md, "Connecting upstreams"):
// each with its state and a button that starts the OAuth flow at the upstream's authorization server (a
// plain navigation: the gateway redirects there and back to this project). Absent when the gateway does
// not offer connecting, or the project has no per-user upstream.
import { api } from '../api.js';
import { h } from '../dom.js';

const STATUS = {
  active: 'Connected',
  expired: 'Expired',
  revoked: 'Disconnected',
  none: 'Not connected',
};

export async function connectionsSection(slug) {
  let data;
  try {
    data = await api('GET', `/v1/projects/${encodeURIComponent(slug)}/connections`);
  } catch {
    return null; // not offered
  }
  if (!data.connections.length) return null;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'connections-heading' },
    h('h2', { id: 'connections-heading' }, 'Your connections'),
    h(
      'ul',
      { class: 'connections' },
      data.connections.map((c) =>
        h(
          'li',
          { 'data-connection': c.alias },
          h('strong', {}, c.alias),
          ' ',
          h('span', { class: 'muted', 'data-status': c.status }, STATUS[c.status] ?? c.status),
          ' ',
          h(
            'button',
            { type: 'button', onclick: () => location.assign(c.connectUrl) },
            c.status === 'active' ? `Reconnect ${c.alias}` : `Connect ${c.alias}`,
          ),
        ),
      ),
    ),
  );
}
