/**
 * Parameters of the requests about one prompt or completion (MCP 2026-07-28, "Prompts" and
 * "Completion"): checked by the gateway before anything is forwarded, so an upstream never sees a request
 * the schema already refuses (a client mistake is the client's -32602, not the upstream's).
 */
import { z } from 'zod';

/** `arguments` of `prompts/get` and `context.arguments` of `completion/complete`: strings by name. */
const StringArgumentsSchema = z.record(z.string(), z.string());

export const GetPromptParamsSchema = z.looseObject({
  name: z.string(),
  arguments: StringArgumentsSchema.optional(),
});

export const CompleteParamsSchema = z.looseObject({
  ref: z.union([
    z.looseObject({ type: z.literal('ref/prompt'), name: z.string() }),
    z.looseObject({ type: z.literal('ref/resource'), uri: z.string() }),
  ]),
  argument: z.looseObject({ name: z.string(), value: z.string() }),
  context: z.looseObject({ arguments: StringArgumentsSchema.optional() }).optional(),
});
