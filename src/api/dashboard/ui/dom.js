// Building and redrawing the DOM. Everything goes through textContent-style nodes, never innerHTML, so
// nothing a task carries can become markup; redraws keep the keyboard focus where it was.

/** Creates an element; attributes starting with "on" become listeners, children may be strings. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false || child === '') continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
}

/** A selector that finds the "same" element again after a redraw (tabs, filter buttons, task links). */
function focusKey(el) {
  if (!el || el === document.body) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  if (el.dataset.group) return `[data-group="${CSS.escape(el.dataset.group)}"]`;
  if (el.dataset.assigned) return `[data-assigned="${CSS.escape(el.dataset.assigned)}"]`;
  if (el.tagName === 'A' && el.getAttribute('href'))
    return `a[href="${CSS.escape(el.getAttribute('href'))}"]`;
  return null;
}

/** Runs a redraw and puts keyboard focus back on the equivalent element, if it had focus before. */
export function keepFocus(redraw) {
  const before = document.activeElement;
  const key = focusKey(before);
  redraw();
  if (!before || before === document.body || before.isConnected) return;
  // The focused element was redrawn away: focus its successor, or the page's main region.
  const again = key ? document.querySelector(key) : null;
  (again ?? document.getElementById('main')).focus();
}

/** Tells screen reader users what changed (the live region in index.html). */
export function announce(message) {
  const el = document.getElementById('announcer');
  el.textContent = '';
  setTimeout(() => (el.textContent = message), 50);
}
