/** One tools/call on its way, as every path of it (ordinary, task, inline, hosted, approval) takes it. */
import type { CallToolParams } from '../../protocol';
import type { RoutedTool } from '../name-owners';

export interface RoutedCall {
  /** The client's params (the gateway's own connect answer already taken out). */
  params: CallToolParams;
  /** The upstream and tool the exposed name routes to. */
  routed: RoutedTool;
  /** The `Mcp-Param-*` headers relayed upstream. */
  headers: Record<string, string>;
}
