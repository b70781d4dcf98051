// Live refresh: one timer at a time, tied to the render that started it, so leaving a view stops its
// polling and a hidden tab polls nothing.
import { ApiError } from './api.js';
import { state } from './state.js';

export function stopRefresh() {
  if (state.timer !== null) clearTimeout(state.timer);
  state.timer = null;
}

/** Re-runs `tick` every `ms` while this render is current and the page is visible. */
export function keepRefreshing(renderId, ms, tick) {
  const loop = async () => {
    if (renderId !== state.renderId) return;
    if (document.visibilityState === 'visible') {
      try {
        await tick();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
      }
    }
    if (renderId === state.renderId) state.timer = setTimeout(loop, ms);
  };
  state.timer = setTimeout(loop, ms);
}
