/**
 * `subscriptions/listen`: a long-lived SSE stream. The gateway does not relay list-change, resource or
 * task notifications yet, so it acknowledges the filter with the subset it agrees to (none) and keeps the
 * stream open until the client closes it; clients poll `tasks/get` for task status. On shutdown every
 * stream gets the final result the spec asks for, so clients see an orderly end rather than a drop.
 */
import type { ServerResponse } from 'node:http';
import type { RequestId } from '../../protocol';
import { META } from '../../protocol';
import type { ResponseStream } from './response-stream';

export class Subscriptions {
  private readonly open = new Map<ServerResponse, () => void>();

  async listen(id: RequestId, _params: Record<string, unknown>, stream: ResponseStream, res: ServerResponse) {
    stream.start();
    stream.notify({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: {}, _meta: { [META.subscriptionId]: id } },
    });
    await new Promise<void>((resolve) => {
      const end = () => {
        this.open.delete(res);
        resolve();
      };
      this.open.set(res, () => {
        stream.finish({
          jsonrpc: '2.0',
          id,
          result: { resultType: 'complete', _meta: { [META.subscriptionId]: id } },
        });
        end();
      });
      res.once('close', end);
    });
  }

  /** Ends every open stream with its final result. */
  closeAll(): void {
    for (const close of [...this.open.values()]) close();
  }
}
