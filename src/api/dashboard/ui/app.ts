// The TaskRouter dashboard's entry module: small ES modules (compiled from TypeScript), no framework and
// no third-party code. It talks only to the gateway's own JSON API (/v1/session, /v1/projects…) and
// builds the DOM with textContent, never innerHTML, so nothing a task carries can become markup. Routes
// live in the URL fragment (render.ts).
import { mainElement } from './dom.js';
import { setRenderer } from './nav.js';
import { render } from './render.js';

setRenderer(render);

// The skip link must not go through the fragment's render.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  mainElement().focus();
});
window.addEventListener('hashchange', () => void render());
void render();
