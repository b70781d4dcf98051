/**
 * A tiny round-robin HTTP reverse proxy in front of the API replicas, behaving like the Compose file's
 * Caddy: each request goes to the next replica; a replica that refuses the connection (it is down, so
 * nothing was sent) is skipped and the next one tried; a replica that dies after the request was sent
 * gives the client a 502 and is never retried (the request may have had an effect).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests answered 502 because the replica failed after the request was sent. */
  failedAfterSend: number;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(targets: () => readonly number[]): Promise<RoundRobinProxy> {
  let next = 0;
  const stats = { failedAfterSend: 0 };
  // One connection per request: a refused connection then always means the request was not sent.
  const agent = new http.Agent({ keepAlive: false });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ports = targets();
      const start = next++;
      const attempt = (tries: number): void => {
        const port = ports[(start + tries) % ports.length];
        if (port === undefined || tries >= ports.length) {
          res.writeHead(502, { 'content-type': 'text/plain' }).end('no replica accepted the connection');
          return;
        }
        let connected = false;
        const upstream = http.request(
          { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
          (reply) => {
            res.writeHead(reply.statusCode ?? 502, reply.headers);
            reply.pipe(res);
            reply.on('error', () => res.destroy());
          },
        );
        upstream.on('socket', (socket) => {
          if (!socket.connecting) connected = true;
          else socket.once('connect', () => (connected = true));
        });
        upstream.on('error', (err: NodeJS.ErrnoException) => {
          if (!connected && err.code === 'ECONNREFUSED') {
            attempt(tries + 1);
            return;
          }
          stats.failedAfterSend++;
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(err.message);
          else res.destroy();
        });
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get failedAfterSend() {
      return stats.failedAfterSend;
    },
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
