// The viewer's connections to the project's per-user upstreams (docs/oauth.md, "Connecting upstreams"):
// each with its state and a button that starts the OAuth flow at the upstream's authorization server (a
// plain navigation: the gateway redirects there and back to this project), and one that disconnects an
// active connection. Absent when the gateway does not offer connecting, or the project has no upstream
// connected with OAuth.
import type { ConnectionsView } from '../../view-types';
import { api, messageOf } from '../api.js';
import { announce, h } from '../dom.js';

// How the gateway's client at the upstream's authorization server came about (the last connect).
const REGISTRATION: Partial<Record<string, string>> = {
  configured: 'configured client',
  metadata_document: 'client metadata document',
  dynamic: 'dynamic registration',
};

const STATUS: Partial<Record<string, string>> = {
  active: 'Connected',
  expired: 'Expired',
  revoked: 'Disconnected',
  none: 'Not connected',
};

export async function connectionsSection(slug: string): Promise<HTMLElement | null> {
  let data: ConnectionsView;
  try {
    data = await api<ConnectionsView>('GET', `/v1/projects/${encodeURIComponent(slug)}/connections`);
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
          c.registration &&
            h(
              'span',
              { class: 'muted small', 'data-registration': c.registration },
              ` · ${REGISTRATION[c.registration] ?? c.registration}`,
            ),
          ' ',
          h(
            'button',
            { type: 'button', onclick: () => location.assign(c.connectUrl) },
            c.status === 'active' ? `Reconnect ${c.alias}` : `Connect ${c.alias}`,
          ),
          c.status === 'active' ? ' ' : null,
          c.status === 'active' ? disconnectButton(slug, c.alias) : null,
        ),
      ),
    ),
  );
}

// Revokes the viewer's connection (and, server side, its tokens at the upstream's authorization server);
// then the section is drawn again from the server's answer.
function disconnectButton(slug: string, alias: string): HTMLButtonElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async (event) => {
        if (!confirm(`Disconnect ${alias}? Calls to it will ask you to connect again.`)) return;
        const button = event.target as HTMLButtonElement;
        const section = button.closest('section');
        button.disabled = true;
        try {
          await api(
            'DELETE',
            `/v1/projects/${encodeURIComponent(slug)}/connections/${encodeURIComponent(alias)}`,
          );
          announce(`${alias} disconnected`);
        } catch (err) {
          announce(`Disconnecting ${alias} failed: ${messageOf(err)}`);
        }
        const fresh = await connectionsSection(slug);
        if (fresh) section?.replaceWith(fresh);
        else section?.remove();
      },
    },
    `Disconnect ${alias}`,
  );
}
