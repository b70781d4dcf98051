/** An admin API route: the acting principal, path parameters, body and query, answered with a Reply. */
import type { ControlPlaneStore } from '../../store/control-plane';
import type { Principal } from '../../store/control-plane/types';
import type { Reply } from '../routes';
import { routePattern } from '../routes';

export interface AdminRequest {
  actor: Principal;
  params: string[];
  body: Record<string, unknown>;
  query: URLSearchParams;
}

export type AdminHandler<D> = (cp: ControlPlaneStore, req: AdminRequest, deps: D) => Promise<Reply>;

export function adminRoute<D>(method: string, pattern: string, handler: AdminHandler<D>) {
  return { method, pattern: routePattern(pattern), handler };
}
