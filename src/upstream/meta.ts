/**
 * The `_meta` envelope for one upstream hop. The gateway re-derives the reserved keys (version,
 * capabilities, client identity) and relays every other key, vendor and trace keys included, unchanged.
 */
import type { ClientCapabilities, Implementation, Meta } from '../protocol';
import { META, TASKS_EXTENSION } from '../protocol';

/**
 * Keys never relayed; everything else in `_meta` is. The reserved envelope keys the gateway owns on each
 * hop, and the keys that name tasks by id: a client names *gateway* task ids there, which are its own
 * bearer secrets and mean nothing to an upstream (docs/protocol-decisions.md, "Open edges").
 */
const HOP_KEYS: ReadonlySet<string> = new Set([
  META.protocolVersion,
  META.clientCapabilities,
  META.clientInfo,
  META.serverInfo,
  META.subscriptionId,
  META.relatedTaskIds,
  META.legacyRelatedTask,
]);

export function relayableMeta(meta: Meta | undefined): Meta {
  const out: Meta = {};
  for (const [k, v] of Object.entries(meta ?? {})) if (!HOP_KEYS.has(k)) out[k] = v;
  return out;
}

/**
 * The envelope for one hop: the relayed keys of `relayedMeta` (its hop keys, if any, are left out, so a
 * client's whole `_meta` may be passed) and the hop keys this gateway sets. One copy, whatever its size.
 */
export function upstreamMeta(opts: {
  relayedMeta: Meta;
  protocolVersion: string;
  capabilities: ClientCapabilities;
  gatewayInfo: Implementation;
}): Meta {
  const out = relayableMeta(opts.relayedMeta);
  out[META.protocolVersion] = opts.protocolVersion;
  out[META.clientCapabilities] = opts.capabilities;
  out[META.clientInfo] = opts.gatewayInfo;
  return out;
}

/** The capabilities the gateway declares for a task-path call: Tasks, plus form elicitation if relayable. */
export function taskPathCapabilities(elicitationForm: boolean): ClientCapabilities {
  return {
    extensions: { [TASKS_EXTENSION]: {} },
    ...(elicitationForm && { elicitation: { form: {} } }),
  };
}
