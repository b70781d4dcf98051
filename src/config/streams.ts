/**
 * Bounds on the streams the gateway relays to clients (the `streams` section): SSE answers with upstream
 * notifications, `subscriptions/listen` streams. A client that stops reading costs at most a bounded
 * buffer, never the process.
 */
import { z } from 'zod';

export const StreamsConfigSchema = z.strictObject({});
export type StreamsConfig = z.infer<typeof StreamsConfigSchema>;
