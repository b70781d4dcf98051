/**
 * The wire side of the generated hostile-input test: raw HTTP requests (any method, any header, any bytes)
 * against the gateway process, and the judge of what comes back: a JSON-RPC answer shaped as the spec
 * says (one JSON object, or an SSE stream of notifications ending with the response), or one of the
 * documented HTTP-level answers without a JSON-RPC body (202, 405).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'node:http';

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function closeAgent(): void {
  agent.destroy();
}

/**
 * Sends one request and reads the whole answer (an SSE stream is read to its end). A kept-alive socket the
 * server closed just as it was reused (its idle timeout) fails before the request was read: sent again
 * once on a fresh socket, as HTTP clients do (the upstream's case count would catch a duplicate).
 */
export async function send(port: number, r: RawRequest, timeoutMs = 20_000): Promise<RawReply> {
  try {
    return await sendOnce(port, r, timeoutMs);
  } catch (err) {
    if (!(err as { reusedSocket?: boolean }).reusedSocket) throw err;
    return sendOnce(port, r, timeoutMs);
  }
}

function sendOnce(port: number, r: RawRequest, timeoutMs: number): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: r.method,
        path: r.path,
        agent,
        headers: { ...r.headers, 'content-length': String(r.body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      // Only a reset before any answer on a reused socket is the keep-alive race; anything else fails.
      const race = req.reusedSocket && (code === 'ECONNRESET' || err.message === 'socket hang up');
      reject(race ? Object.assign(err, { reusedSocket: true }) : err);
    });
    req.end(r.body);
  });
}

export interface JsonRpcAnswer {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * The JSON-RPC response in a reply, checked against the spec's shape; throws with the reason when the
 * reply is not one. `undefined` for a reply without a body.
 */
export function answerOf(reply: RawReply): JsonRpcAnswer | undefined {
  if (reply.body.length === 0) return undefined;
  const type = String(reply.headers['content-type'] ?? '');
  const text = reply.body.toString('utf8');
  if (type.startsWith('text/event-stream')) {
    const messages = sseMessages(text);
    const last = messages.pop();
    for (const m of messages) {
      // On a response stream only notifications precede the response; never a request, never another answer.
      if (typeof m.method !== 'string' || 'id' in m)
        throw new Error(`not a notification on the stream: ${JSON.stringify(m)}`);
    }
    if (!last) throw new Error('an SSE stream without a response');
    return responseShape(last);
  }
  if (!type.startsWith('application/json')) throw new Error(`a body of type "${type}"`);
  return responseShape(JSON.parse(text) as Record<string, unknown>);
}

function sseMessages(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const event of text.split(/\n\n/)) {
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') out.push(JSON.parse(data) as Record<string, unknown>);
  }
  return out;
}

function responseShape(m: Record<string, unknown>): JsonRpcAnswer {
  const keys = Object.keys(m).sort().join(',');
  if (m.jsonrpc !== '2.0') throw new Error('jsonrpc is not "2.0"');
  if (keys === 'id,jsonrpc,result') {
    if (typeof m.result !== 'object' || m.result === null || Array.isArray(m.result))
      throw new Error('result is not an object');
    if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id))
      throw new Error('a result without a request id');
    return { id: m.id, result: m.result as Record<string, unknown> };
  }
  if (keys === 'error,id,jsonrpc') {
    const e = m.error as Record<string, unknown>;
    if (typeof e !== 'object' || e === null || !Number.isInteger(e.code) || typeof e.message !== 'string')
      throw new Error(`a malformed error object: ${JSON.stringify(e)}`);
    if (m.id !== null && typeof m.id !== 'string' && !Number.isSafeInteger(m.id)) throw new Error('a bad id');
    return { id: m.id, error: e as JsonRpcAnswer['error'] };
  }
  throw new Error(`not a JSON-RPC response (members ${keys})`);
}
