/** A `subscriptions/listen` client for tests: opens the stream and collects its messages. */
import { META, PROTOCOL_VERSION, requestHeaders } from '../../src/protocol';
import { readSseMessages } from '../../src/upstream/http';
import { TASKS_AND_FORM_CAPS } from './mcp-client';

export interface Listen {
  messages: Record<string, unknown>[];
  /** Resolves with the first message `match` accepts. */
  next(match: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): void;
}

/** Opens `subscriptions/listen` on `url` and collects the stream's messages. */
export async function listen(
  url: string,
  notifications: Record<string, unknown>,
  capabilities: Record<string, unknown> = TASKS_AND_FORM_CAPS,
  /** Sent with the request (e.g. `authorization` for a project that authenticates its callers). */
  headers: Record<string, string> = {},
) {
  const controller = new AbortController();
  const params = {
    notifications,
    _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: capabilities },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...requestHeaders('subscriptions/listen', params, PROTOCOL_VERSION),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params }),
    signal: controller.signal,
  });
  const messages: Record<string, unknown>[] = [];
  const waiters: {
    match: (m: Record<string, unknown>) => boolean;
    resolve: (m: Record<string, unknown>) => void;
  }[] = [];
  const reading = (async () => {
    if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const m = (await res.json()) as Record<string, unknown>;
      messages.push(m);
      for (const w of [...waiters]) if (w.match(m)) w.resolve(m);
      return;
    }
    await readSseMessages(res.body as unknown as AsyncIterable<Buffer>, (m) => {
      messages.push(m);
      for (const w of [...waiters]) if (w.match(m)) w.resolve(m);
    });
  })().catch(() => undefined);
  const handle: Listen = {
    messages,
    next(match, timeoutMs = 20_000) {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching message in ${JSON.stringify(messages)}`)),
          timeoutMs,
        );
        waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
    close() {
      controller.abort();
      void reading;
    },
  };
  return { res, handle };
}

/** The stream's acknowledgement of what it listens for. */
export const isAck = (m: Record<string, unknown>) => m.method === 'notifications/subscriptions/acknowledged';

/** Waits for a condition of the real processes (no time bound asserted: the test's timeout is the limit). */
export async function untilSeen(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}
