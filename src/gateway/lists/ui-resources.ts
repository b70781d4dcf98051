/**
 * MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) through the gateway. A tool points at its view, a
 * `ui://` resource of the same server, in `_meta.ui.resourceUri` (or the deprecated flat
 * `_meta["ui/resourceUri"]`); the host reads that resource with `resources/read`. Upstreams pick their
 * `ui://` names on their own (`ui://widget/index.html` is a common one), so with namespacing on the
 * gateway gives each upstream's views a name of their own, `ui://{alias}/{the upstream's URI without
 * "ui://"}`, everywhere a client meets one (the tool's `_meta`, `resources/list`, resource templates,
 * the contents of a read), and a read of such a URI goes to that upstream with its own URI. Views are
 * discovered through their tools, never guessed, so renaming them breaks no client; other resources keep
 * their URIs. With namespacing off every name is the upstream's own, views included.
 */
import { UI_EXTENSION } from '../../protocol';

const SCHEME = 'ui://';
/** The pre-GA flat key (deprecated by the extension, still sent by some servers). */
const FLAT_KEY = 'ui/resourceUri';

export function isUiUri(uri: unknown): uri is string {
  return typeof uri === 'string' && uri.startsWith(SCHEME);
}

/** The URI a client sees for an upstream's `ui://` URI (other URIs are returned as they are). */
export function exposedUiUri(alias: string, uri: string, namespacing: boolean): string {
  return namespacing && isUiUri(uri) ? `${SCHEME}${alias}/${uri.slice(SCHEME.length)}` : uri;
}

/**
 * The upstream alias and the upstream's own URI of a client's namespaced `ui://` URI; undefined when it
 * names no alias (`ui://` alone, or nothing after the alias).
 */
export function splitUiUri(exposed: string): { alias: string; uri: string } | undefined {
  if (!isUiUri(exposed)) return undefined;
  const rest = exposed.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { alias: rest.slice(0, slash), uri: `${SCHEME}${rest.slice(slash + 1)}` };
}

type Item = Record<string, unknown>;

function isObject(v: unknown): v is Item {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The view a tool points at, by the extension's key or the deprecated flat one. */
export function uiResourceUriOf(tool: Item): string | undefined {
  const meta = tool._meta;
  if (!isObject(meta)) return undefined;
  const nested = isObject(meta.ui) ? meta.ui.resourceUri : undefined;
  if (isUiUri(nested)) return nested;
  return isUiUri(meta[FLAT_KEY]) ? meta[FLAT_KEY] : undefined;
}

/**
 * A tool (or a tool result) whose `_meta` view reference names the exposed URI, so a host following it
 * reaches the upstream that serves it. Every other `_meta` key, `ui.visibility` included, is unchanged.
 */
export function withExposedUiMeta(alias: string, item: Item, namespacing: boolean): Item {
  const meta = item._meta;
  if (!namespacing || !isObject(meta)) return item;
  const rename = (uri: unknown) => (isUiUri(uri) ? exposedUiUri(alias, uri, true) : uri);
  let out: Item | undefined;
  if (isObject(meta.ui) && isUiUri(meta.ui.resourceUri)) {
    out = { ...meta, ui: { ...meta.ui, resourceUri: rename(meta.ui.resourceUri) } };
  }
  if (isUiUri(meta[FLAT_KEY])) out = { ...(out ?? meta), [FLAT_KEY]: rename(meta[FLAT_KEY]) };
  return out ? { ...item, _meta: out } : item;
}

/** A `resources/list` or `resources/templates/list` entry with its `ui://` URI (or template) exposed. */
export function exposedResourceEntry(alias: string, entry: Item, namespacing: boolean): Item {
  if (!namespacing) return entry;
  if (isUiUri(entry.uri)) return { ...entry, uri: exposedUiUri(alias, entry.uri, true) };
  if (isUiUri(entry.uriTemplate))
    return { ...entry, uriTemplate: exposedUiUri(alias, entry.uriTemplate, true) };
  return entry;
}

/** A `resources/read` result whose `contents[].uri` are the URIs the client asked by. */
export function exposedReadResult(alias: string, result: Item): Item {
  if (!Array.isArray(result.contents)) return result;
  return {
    ...result,
    contents: result.contents.map((c: unknown) =>
      isObject(c) && isUiUri(c.uri) ? { ...c, uri: exposedUiUri(alias, c.uri, true) } : c,
    ),
  };
}

/**
 * The extension's settings to advertise for the project: what its upstreams advertise, their
 * `mimeTypes` merged; undefined when none does (the gateway relays the extension, it adds nothing).
 */
export function uiExtensionOf(extensions: ReadonlyArray<Item | undefined>): Item | undefined {
  const declared = extensions.flatMap((e) => (e && isObject(e[UI_EXTENSION]) ? [e[UI_EXTENSION]] : []));
  if (declared.length === 0) return undefined;
  const mimeTypes = [
    ...new Set(
      declared.flatMap((d) =>
        Array.isArray(d.mimeTypes) ? d.mimeTypes.filter((m): m is string => typeof m === 'string') : [],
      ),
    ),
  ];
  return mimeTypes.length > 0 ? { mimeTypes } : {};
}
