/**
 * Exposed names of tools and prompts. With namespacing on, a name is `{alias}.{name}`; aliases contain no
 * dot, so the first dot always splits alias from the upstream's own name.
 */

export function exposedName(alias: string, name: string, namespacing: boolean): string {
  return namespacing ? `${alias}.${name}` : name;
}

/** Splits a namespaced name; undefined when it has no alias part. */
export function splitNamespaced(exposed: string): { alias: string; name: string } | undefined {
  const dot = exposed.indexOf('.');
  if (dot <= 0 || dot === exposed.length - 1) return undefined;
  return { alias: exposed.slice(0, dot), name: exposed.slice(dot + 1) };
}
