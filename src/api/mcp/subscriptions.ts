/**
 * `subscriptions/listen`: a long-lived SSE stream. The gateway does not relay list-change, resource or
 * task notifications yet, so it acknowledges the filter with the subset it agrees to (none) and keeps the
 * stream open until the client closes it; clients poll `tasks/get` for task status. On shutdown every
 * stream gets the final result the spec asks for, so clients see an orderly end rather than a drop.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { RequestId } from '../../protocol';
import { META, ProtocolError } from '../../protocol';
import type { ResponseStream } from './response-stream';

/** The listen request's filter: what the client asks to be told. */
const ListenParamsSchema = z.looseObject({ notifications: z.looseObject({}).optional() });

export class Subscriptions {
  private readonly open = new Map<ServerResponse, () => void>();
  private readonly perListener = new Map<string, number>();

  /** `maxPerListener`: open streams one caller may hold on one project (each holds a connection). */
  constructor(private readonly maxPerListener = 16) {}

  async listen(
    id: RequestId,
    params: Record<string, unknown>,
    stream: ResponseStream,
    res: ServerResponse,
    listener: string,
  ) {
    if (!ListenParamsSchema.safeParse(params).success) {
      throw new ProtocolError('InvalidParams', 'params.notifications must be an object');
    }
    const held = this.perListener.get(listener) ?? 0;
    if (held >= this.maxPerListener) {
      throw new ProtocolError(
        'InvalidRequest',
        `At most ${this.maxPerListener} open subscriptions per caller`,
      );
    }
    this.perListener.set(listener, held + 1);
    res.once('close', () => {
      const left = (this.perListener.get(listener) ?? 1) - 1;
      if (left > 0) this.perListener.set(listener, left);
      else this.perListener.delete(listener);
    });
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
