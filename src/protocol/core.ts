/** MCP core 2026-07-28 messages the gateway reads or writes. */
import { z } from 'zod';
import { META } from './constants';

export const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  title: z.string().optional(),
});
export type Implementation = z.infer<typeof ImplementationSchema>;

export const ClientCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  elicitation: z
    .looseObject({ form: z.looseObject({}).optional(), url: z.looseObject({}).optional() })
    .optional(),
  sampling: z.looseObject({}).optional(),
  roots: z.looseObject({}).optional(),
  extensions: z.record(z.string(), z.looseObject({})).optional(),
});
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

export const ServerCapabilitiesSchema = z.looseObject({
  experimental: z.record(z.string(), z.unknown()).optional(),
  tools: z.looseObject({ listChanged: z.boolean().optional() }).optional(),
  prompts: z.looseObject({}).optional(),
  resources: z.looseObject({}).optional(),
  completions: z.looseObject({}).optional(),
  logging: z.looseObject({}).optional(),
  extensions: z.record(z.string(), z.looseObject({})).optional(),
});
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;

/** Free-form `_meta`: every key is kept, whatever its owner. */
export const MetaSchema = z.record(z.string(), z.unknown());
export type Meta = z.infer<typeof MetaSchema>;

/** The per-request envelope that 2026-07-28 requires on every request's `params._meta`. */
export const RequestMetaSchema = z.looseObject({
  [META.protocolVersion]: z.string(),
  [META.clientCapabilities]: ClientCapabilitiesSchema,
  [META.clientInfo]: ImplementationSchema.optional(),
});
export type RequestMeta = z.infer<typeof RequestMetaSchema>;

export const RequestParamsSchema = z.looseObject({ _meta: RequestMetaSchema });

/** Every result carries `resultType`; unknown fields are kept. */
export const ResultSchema = z.looseObject({
  resultType: z.string(),
  _meta: MetaSchema.optional(),
});
export type Result = z.infer<typeof ResultSchema>;

export const DiscoverResultSchema = ResultSchema.extend({
  supportedVersions: z.array(z.string()),
  capabilities: ServerCapabilitiesSchema,
  instructions: z.string().optional(),
  ttlMs: z.int().nonnegative(),
  cacheScope: z.enum(['public', 'private']),
});
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;

export const ToolAnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

export const ToolSchema = z.looseObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  outputSchema: z.looseObject({}).optional(),
  annotations: ToolAnnotationsSchema.optional(),
  _meta: MetaSchema.optional(),
});
export type Tool = z.infer<typeof ToolSchema>;

export const ListToolsParamsSchema = RequestParamsSchema.extend({ cursor: z.string().optional() });

export const ListToolsResultSchema = ResultSchema.extend({
  tools: z.array(ToolSchema),
  nextCursor: z.string().optional(),
  ttlMs: z.int().nonnegative(),
  cacheScope: z.enum(['public', 'private']),
});
export type ListToolsResult = z.infer<typeof ListToolsResultSchema>;

/** `inputRequests` / `inputResponses` are keyed by server-chosen names; values are relayed unchanged. */
export const InputRequestSchema = z.looseObject({ method: z.string(), params: z.looseObject({}).optional() });
export const InputRequestsSchema = z.record(z.string(), InputRequestSchema);
export type InputRequests = z.infer<typeof InputRequestsSchema>;
export const InputResponsesSchema = z.record(z.string(), z.looseObject({}));
export type InputResponses = z.infer<typeof InputResponsesSchema>;

export const CallToolParamsSchema = RequestParamsSchema.extend({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  inputResponses: InputResponsesSchema.optional(),
  requestState: z.string().optional(),
});
export type CallToolParams = z.infer<typeof CallToolParamsSchema>;

export const CallToolResultSchema = ResultSchema.extend({
  resultType: z.literal('complete'),
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});
export type CallToolResult = z.infer<typeof CallToolResultSchema>;

export const InputRequiredResultSchema = ResultSchema.extend({
  resultType: z.literal('input_required'),
  inputRequests: InputRequestsSchema.optional(),
  requestState: z.string().optional(),
});
export type InputRequiredResult = z.infer<typeof InputRequiredResultSchema>;
