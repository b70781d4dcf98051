/**
 * Bounds on the streams the gateway relays to clients (the `streams` section): SSE answers with upstream
 * notifications, `subscriptions/listen` streams. A client that stops reading costs at most a bounded
 * buffer, never the process (docs/gateway.md, "Streams to clients"; sizing in docs/operators.md).
 */
import { z } from 'zod';

export const StreamsConfigSchema = z.strictObject({
  /**
   * Bytes of events one stream may hold queued while its client's socket is full; past it the stream
   * ends with `StreamOverflow` (-31016). 256 KiB: an upstream relay stops reading while the socket is
   * full, so it queues at most one read of the upstream (about 64 KiB) plus one notification, and a listen
   * stream coalesces to one event per task, resource and list kind; either fits with room. A thousand
   * stalled streams then cost at most about 256 MiB (an event is always taken into an empty queue,
   * so one large task result cannot end a stream by itself).
   */
  maxQueuedBytes: z
    .int()
    .min(16 * 1024)
    .default(256 * 1024),
  /**
   * Largest upstream notification relayed (bytes of JSON); a larger one is dropped, counted and logged
   * once per request. 64 KiB: progress and log messages are lines of text, list and resource changes
   * a URI; a bigger payload belongs in a result, which has its own limits.
   */
  maxNotificationBytes: z
    .int()
    .min(1024)
    .default(64 * 1024),
  /**
   * Longest `message` of a relayed `notifications/progress` (UTF-16 code units); a longer one is cut
   * (ending in `…`). 1024: a line or two of status, sent as often as the tool likes.
   */
  maxProgressMessageChars: z.int().min(16).default(1024),
  /**
   * Longest task `statusMessage` the gateway takes from an upstream (UTF-16 code units), cut (ending in
   * `…`) where the worker observes the task, before it is stored, pushed or returned. 4096: a few
   * paragraphs; each status change is stored and pushed to every follower, so a larger one multiplies.
   */
  maxStatusMessageChars: z.int().min(16).default(4096),
  /**
   * Open `subscriptions/listen` streams one caller may hold on one project on one replica. 16: a few
   * clients of one user (an editor, an agent, a dashboard tab) with room to reconnect.
   */
  maxPerCaller: z.int().positive().default(16),
  /**
   * Open `subscriptions/listen` streams of one project on one replica, all callers together. 256: sixteen
   * callers at the per-caller cap; each stream holds a socket, up to `maxQueuedBytes` while its client
   * stalls and possibly an upstream listen, so one project holds at most 64 MiB of queues per replica.
   */
  maxPerProject: z.int().positive().default(256),
});
export type StreamsConfig = z.infer<typeof StreamsConfigSchema>;

/** The defaults, for code run without a configuration (tests, the in-process gateway). */
export const DEFAULT_STREAMS: StreamsConfig = StreamsConfigSchema.parse({});
