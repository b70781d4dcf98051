/**
 * Reading one JSON-RPC message from a request body (a request or notification; a response too where the
 * caller allows it): media type, size limit (checked against the
 * declared length first, then while reading), JSON, and the frame. Each failure is the JSON-RPC error
 * the spec's codes imply (-32700 for bad JSON, -32600 for a bad frame), never an exception of its own.
 */
import type { IncomingMessage } from 'node:http';
import type { JsonRpcMessage } from '../../protocol';
import { JsonRpcClientMessageSchema, JsonRpcResponseSchema, ProtocolError } from '../../protocol';

export async function readMessage(
  req: IncomingMessage,
  contentType: string,
  limit: number,
  opts: { responses?: boolean } = {},
): Promise<JsonRpcMessage> {
  if (contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
    throw new ProtocolError('UnsupportedMediaType', 'Content-Type must be application/json');
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ProtocolError('PayloadTooLarge', `Request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
  } catch {
    throw new ProtocolError('ParseError', 'Parse error');
  }
  const parsed = JsonRpcClientMessageSchema.safeParse(json);
  if (!parsed.success && opts.responses) {
    const response = JsonRpcResponseSchema.safeParse(json);
    if (response.success) return response.data;
  }
  if (!parsed.success) {
    if (Array.isArray(json)) throw new ProtocolError('InvalidRequest', 'Batches are not supported');
    throw new ProtocolError('InvalidRequest', 'Invalid JSON-RPC message');
  }
  return parsed.data;
}
