/**
 * The HTTP listener of the API role, with a graceful close: stop accepting connections, let the requests
 * already running finish (up to a grace period), then cut whatever is left.
 */
import type { RequestListener } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpServer {
  url: string;
  /** Resolves once every connection is closed; requests still running after `graceMs` are cut off. */
  close(graceMs: number): Promise<void>;
}

export async function listen(handler: RequestListener, host: string, port: number): Promise<HttpServer> {
  let running = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  const server = createServer((req, res) => {
    running++;
    // A request that came in on a kept-alive connection while draining is still answered, on its own.
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      running--;
      if (running === 0) idle?.();
    });
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${host}:${addr.port}`,
    async close(graceMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (running > 0 && graceMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          idle = resolve;
          timer = setTimeout(resolve, graceMs);
        });
        clearTimeout(timer);
      }
      server.closeAllConnections();
      await closed;
    },
  };
}
