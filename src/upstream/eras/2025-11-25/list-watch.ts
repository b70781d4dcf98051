/**
 * Watching a 2025-era upstream's list changes for `subscriptions/listen` (src/api/mcp/list-feed.ts):
 * its `notifications/{tools,prompts,resources}/list_changed` come on a session's standalone stream (the
 * transport's `listen`; HTTP: the GET stream), which the SDK allows once per session. The sessions calls
 * use are shared by every replica and their stream belongs to whichever process opened it, not to the
 * replica holding the watch's lease, so a watch opens a session of its own (`initialize`), holds its
 * stream on the transport's `stream` lane (quiet is normal: a silence timeout would end the stream, and
 * the feed writes every kind once after each end), refuses any request the upstream sends on it, and
 * ends the session when it stops. The feed sees the 2026 shape: an acknowledgement once the stream is
 * open, then the notifications.
 */
import type { Implementation } from '../../../protocol';
import type { UpstreamEndpoint } from '../../endpoint';
import { UpstreamTransportError } from '../../errors';
import { refusal } from './server-requests';
import { handshake } from './sessions';
import type { Era20251125Wire, WireTarget } from './wire';
import { serverRequest } from './wire';

const LIST_CHANGED = /^notifications\/(tools|prompts|resources)\/list_changed$/;

export async function watchEra20251125Lists(
  wire: Era20251125Wire,
  endpoint: UpstreamEndpoint,
  clientInfo: Implementation,
  onNotification: (message: Record<string, unknown>) => void,
  signal: AbortSignal,
): Promise<void> {
  const session = await handshake(wire, endpoint, {}, clientInfo, signal);
  const target: WireTarget = {
    endpoint,
    protocolVersion: session.protocolVersion,
    sessionId: session.sessionId,
  };
  try {
    if (!session.sessionId)
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" keeps no session to announce changes on`,
        true,
      );
    const stream = await wire.listen(target, signal);
    if (!stream)
      throw new UpstreamTransportError(
        `Upstream "${endpoint.alias}" offers no stream to announce changes on`,
        true,
      );
    onNotification({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} });
    await stream.read((msg) => {
      const request = serverRequest(msg);
      if (request) {
        wire.deliver(target, refusal(request)).catch(() => {});
        return;
      }
      if (typeof msg.method === 'string' && LIST_CHANGED.test(msg.method)) onNotification(msg);
    });
  } finally {
    await wire.end(target).catch(() => {});
  }
}
