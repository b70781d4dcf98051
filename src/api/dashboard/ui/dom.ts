// Building and redrawing the DOM. Everything goes through textContent-style nodes, never innerHTML, so
// nothing a task carries can become markup; redraws keep the keyboard focus where it was.

/** What `h` and `replace` take as children: nodes, text, nothing (skipped) and lists of these. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/**
 * Attributes of `h`: `on…` become listeners (typed for the events the dashboard uses), `class` the
 * class name, `true` an empty attribute; null, undefined and false leave the attribute out.
 */
export interface Attrs {
  [name: string]: unknown;
  onclick?: (event: MouseEvent) => unknown;
  onkeydown?: (event: KeyboardEvent) => unknown;
  onsubmit?: (event: SubmitEvent) => unknown;
  onchange?: (event: Event) => unknown;
}

/** The children in order, lists flattened, nothing left out (an empty string too, unless `keepEmpty`). */
function flatten(children: readonly Child[], keepEmpty: boolean, into: Array<Node | string> = []) {
  for (const child of children) {
    if (Array.isArray(child)) flatten(child as readonly Child[], keepEmpty, into);
    else if (child === undefined || child === null || child === false) continue;
    else if (child !== '' || keepEmpty) into.push(child instanceof Node ? child : String(child));
  }
  return into;
}

/** Creates an element; attributes starting with "on" become listeners, children may be strings. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value as EventListener);
    else if (key === 'class') el.className = String(value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of flatten(children, false)) {
    el.append(child instanceof Node ? child : document.createTextNode(child));
  }
  return el;
}

/** Replaces an element's children (an empty string stays, as an empty text node). */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren(...flatten(children, true));
}

/** The page's main region (index.html), where every view draws. */
export function mainElement(): HTMLElement {
  const main = document.getElementById('main');
  if (!main) throw new Error('index.html has no <main id="main">');
  return main;
}

/** A selector that finds the "same" element again after a redraw (tabs, filter buttons, task links). */
function focusKey(el: Element | null): string | null {
  if (!el || el === document.body || !(el instanceof HTMLElement)) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  if (el.dataset['group']) return `[data-group="${CSS.escape(el.dataset['group'])}"]`;
  if (el.dataset['assigned']) return `[data-assigned="${CSS.escape(el.dataset['assigned'])}"]`;
  const href = el.getAttribute('href');
  if (el.tagName === 'A' && href) return `a[href="${CSS.escape(href)}"]`;
  return null;
}

/** Runs a redraw and puts keyboard focus back on the equivalent element, if it had focus before. */
export function keepFocus(redraw: () => void): void {
  const before = document.activeElement;
  const key = focusKey(before);
  redraw();
  if (!before || before === document.body || before.isConnected) return;
  // The focused element was redrawn away: focus its successor, or the page's main region.
  const again = key ? document.querySelector<HTMLElement>(key) : null;
  (again ?? mainElement()).focus();
}

/** Tells screen reader users what changed (the live region in index.html). */
export function announce(message: string): void {
  const el = document.getElementById('announcer');
  if (!el) return;
  el.textContent = '';
  setTimeout(() => (el.textContent = message), 50);
}
