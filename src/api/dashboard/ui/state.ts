// What the dashboard keeps between renders: who is signed in and the session's CSRF token, the pending
// refresh timer, which render is the current one (older ones stop drawing), and where keyboard focus
// goes once the next render is done.
import type { UserView } from '../view-types';

export interface DashboardState {
  user: UserView | null;
  csrf: string | null;
  timer: ReturnType<typeof setTimeout> | null;
  renderId: number;
  focusAfterRender: string | null;
}

export const state: DashboardState = {
  user: null,
  csrf: null,
  timer: null,
  renderId: 0,
  focusAfterRender: null,
};
