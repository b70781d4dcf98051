/** An admin API request as a route's handler gets it: the acting principal, path parameters, body and query. */
import type { Principal } from '../../store/control-plane/types';

export interface AdminRequest {
  actor: Principal;
  params: string[];
  body: Record<string, unknown>;
  query: URLSearchParams;
}
