/**
 * What a stream to a client holds while the client's socket is full (response-stream.ts), and the bounds
 * on what an upstream may have relayed on it. Pure.
 *
 * Messages that only say "the state is now X" are coalesced while they wait: a newer one with the same
 * key replaces the queued one (which leaves its place; the newer goes last, where it was sent), so a
 * slow reader gets the latest state instead of every step. Everything else waits in order and counts
 * against the stream's byte bound; past it the stream is ended (the caller decides how).
 */
import { LEGACY_METHOD, truncateText } from '../../protocol';

export type StreamMessage = Record<string, unknown>;

/**
 * The key under which a newer message supersedes a queued one, or undefined when every copy must arrive:
 * progress of one token (latest wins: progress only grows), one list kind's change, one task's status
 * (2026 `notifications/tasks`, 2025 `notifications/tasks/status`), one resource's update. Requests and
 * responses (anything with an `id`) are never coalesced.
 */
export function coalescingKey(message: StreamMessage): string | undefined {
  if ('id' in message || typeof message.method !== 'string') return undefined;
  const method = message.method;
  const params = isObject(message.params) ? message.params : {};
  switch (method) {
    case 'notifications/progress': {
      const token = params.progressToken;
      // The token's type is part of it: "1" and 1 are two tokens.
      return typeof token === 'string' || typeof token === 'number'
        ? `${method} ${JSON.stringify(token)}`
        : undefined;
    }
    case 'notifications/tools/list_changed':
    case 'notifications/prompts/list_changed':
    case 'notifications/resources/list_changed':
      return method;
    case 'notifications/tasks':
    case LEGACY_METHOD.taskStatus:
      return typeof params.taskId === 'string' ? `${method} ${params.taskId}` : undefined;
    case 'notifications/resources/updated':
      return typeof params.uri === 'string' ? `${method} ${params.uri}` : undefined;
    default:
      return undefined;
  }
}

/** What `offer` did: queued it, replaced an older one with the same key, or refused it (over the bound). */
export type Offer = 'queued' | 'replaced' | 'overflow';

/**
 * Events (already framed text) in send order, with their summed UTF-8 size. An event is always taken into
 * an otherwise empty queue, whatever its size: one large event (a task's result) never ends a stream by
 * itself, so a stream holds at most its bound plus one event.
 */
export class CoalescingQueue {
  private readonly events = new Map<string, { text: string; bytes: number }>();
  private seq = 0;
  private total = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get length(): number {
    return this.events.size;
  }

  offer(text: string, key?: string): Offer {
    const bytes = Buffer.byteLength(text);
    // Keys of their own cannot collide with coalescing keys (different first character).
    const slot = key === undefined ? `#${this.seq++}` : `=${key}`;
    const previous = this.events.get(slot);
    const others = this.events.size - (previous ? 1 : 0);
    const after = this.total - (previous?.bytes ?? 0) + bytes;
    if (after > this.maxBytes && others > 0) return 'overflow';
    if (previous) this.events.delete(slot);
    this.events.set(slot, { text, bytes });
    this.total = after;
    return previous ? 'replaced' : 'queued';
  }

  /** Appends an event outside the bound (the stream's final message, which nothing may replace). */
  push(text: string): void {
    const bytes = Buffer.byteLength(text);
    this.events.set(`#${this.seq++}`, { text, bytes });
    this.total += bytes;
  }

  /** The oldest event, taken out of the queue. */
  shift(): string | undefined {
    const first = this.events.entries().next();
    if (first.done === true) return undefined;
    const [slot, event] = first.value;
    this.events.delete(slot);
    this.total -= event.bytes;
    return event.text;
  }

  clear(): void {
    this.events.clear();
    this.total = 0;
  }
}

export interface RelayBounds {
  maxNotificationBytes: number;
  maxProgressMessageChars: number;
}

/**
 * An upstream's notification as it may be relayed: a progress `message` longer than the bound is cut;
 * a notification whose JSON is larger than `maxNotificationBytes` (after the cut) is not relayed at all
 * (`dropped`, with its size). Answers the JSON to send, so it is serialized once.
 */
export function boundedRelay(
  message: StreamMessage,
  bounds: RelayBounds,
): { message: StreamMessage; json: string } | { dropped: number } {
  let relayed = message;
  const params = message.params;
  if (
    message.method === 'notifications/progress' &&
    isObject(params) &&
    typeof params.message === 'string' &&
    params.message.length > bounds.maxProgressMessageChars
  ) {
    relayed = {
      ...message,
      params: { ...params, message: truncateText(params.message, bounds.maxProgressMessageChars) },
    };
  }
  const json = JSON.stringify(relayed);
  // UTF-8 is at most 3 bytes per UTF-16 unit: most notifications are decided without measuring.
  const bytes = json.length * 3 <= bounds.maxNotificationBytes ? json.length : Buffer.byteLength(json);
  return bytes > bounds.maxNotificationBytes ? { dropped: bytes } : { message: relayed, json };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
