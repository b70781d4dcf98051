/**
 * The HTTP listener of the API role, with a graceful close: stop accepting connections, let the requests
 * already running finish (up to a grace period), then cut whatever is left. Slow clients are bounded by
 * its timeouts (a request head, a whole request, an idle kept-alive connection); responses are not, so a
 * listen stream or an inline task wait streams for as long as it needs.
 */
import type { RequestListener } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpServer {
  url: string;
  /** Resolves once every connection is closed; requests still running after `graceMs` are cut off. */
  close(graceMs: number): Promise<void>;
}

/** How long a client may take to send a request head, a whole request, and to reuse an idle connection. */
export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * Node checks the head and request deadlines of open connections on an interval (30 s by default, which
 * would let a slow client hold a socket that much longer): check often enough to close within about a
 * tenth of a second, at most a second, of the deadline.
 */
export function checkingIntervalMs(t: ServerTimeouts): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(t.headersTimeoutMs, t.requestTimeoutMs) / 4)));
}

export async function listen(
  handler: RequestListener,
  host: string,
  port: number,
  timeouts: ServerTimeouts,
): Promise<HttpServer> {
  let running = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  const options = {
    // Time to receive the head, and the whole request; the response is not bounded by either.
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(timeouts),
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
  };
  const server = createServer(options, (req, res) => {
    running++;
    // A request that came in on a kept-alive connection while draining is still answered, on its own.
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      running--;
      if (running === 0) idle?.();
    });
    handler(req, res);
  });
  // Idle time allowed between two requests on one connection (also set as an option: older Node reads this).
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
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
