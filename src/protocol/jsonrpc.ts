/**
 * JSON-RPC 2.0 frames. Frames are strict (unknown top-level keys are a malformed message); params and
 * results are loose objects so that `_meta` and extension fields survive a round trip.
 */
import { z } from 'zod';

export const RequestIdSchema = z.union([z.string(), z.int()]);
export type RequestId = z.infer<typeof RequestIdSchema>;

export const ParamsSchema = z.looseObject({});

export const JsonRpcRequestSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  method: z.string().min(1),
  params: ParamsSchema.optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

export const JsonRpcNotificationSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: ParamsSchema.optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

export const JsonRpcErrorObjectSchema = z.looseObject({
  code: z.int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type JsonRpcErrorObject = z.infer<typeof JsonRpcErrorObjectSchema>;

export const JsonRpcResultResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  result: z.looseObject({}),
});
export type JsonRpcResultResponse = z.infer<typeof JsonRpcResultResponseSchema>;

export const JsonRpcErrorResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

export const JsonRpcResponseSchema = z.union([JsonRpcResultResponseSchema, JsonRpcErrorResponseSchema]);
export type JsonRpcResponse = z.infer<typeof JsonRpcResponseSchema>;

/** Any message a client may POST: one request or one notification (no batches in 2026-07-28). */
export const JsonRpcClientMessageSchema = z.union([JsonRpcRequestSchema, JsonRpcNotificationSchema]);
export type JsonRpcClientMessage = z.infer<typeof JsonRpcClientMessageSchema>;

/** Anything a client may POST: also a response, when it answers a request the server sent it. */
export type JsonRpcMessage = JsonRpcClientMessage | JsonRpcResponse;
