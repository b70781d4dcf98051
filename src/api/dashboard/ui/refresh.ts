// Live refresh: one timer at a time, tied to the render that started it, so leaving a view stops its
// polling and a hidden tab polls nothing.
import { ApiError } from './api.js';
import { state } from './state.js';

export function stopRefresh(): void {
  if (state.timer !== null) clearTimeout(state.timer);
  state.timer = null;
}

/** Re-runs `tick` every `ms` while this render is current and the page is visible. */
export function keepRefreshing(renderId: number, ms: number, tick: () => Promise<void>): void {
  const loop = async (): Promise<void> => {
    if (renderId !== state.renderId) return;
    if (document.visibilityState === 'visible') {
      try {
        await tick();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
      }
    }
    if (renderId === state.renderId) state.timer = setTimeout(() => void loop(), ms);
  };
  state.timer = setTimeout(() => void loop(), ms);
}
