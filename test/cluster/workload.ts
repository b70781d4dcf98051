/**
 * What the cluster test asks of the gateway: creations of every kind through the round-robin proxy,
 * each followed to its end the way a client would (poll `tasks/get`, answer input with `tasks/update`,
 * `tasks/cancel`), retrying only what is safe to retry (follow-ups; never a creation). Every creation
 * carries a unique id in its arguments, so the upstream's own records can be matched to it.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { taskKeyOf } from '../../src/store/tasks/task-types';
import type { RpcReply } from '../helpers/mcp-client';
import { McpTestClient, TASKS_AND_FORM_CAPS, TASKS_CAPS } from '../helpers/mcp-client';

export const KINDS = ['greet', 'slow', 'cancel', 'confirm', 'failing', 'protocolError'] as const;
export type Kind = (typeof KINDS)[number];

/** How many creations of each kind, per 100. */
const MIX: Record<Kind, number> = {
  greet: 14,
  slow: 26,
  cancel: 15,
  confirm: 20,
  failing: 13,
  protocolError: 12,
};

/**
 * What the client was told about a creation: a task (`task`), a synchronous result (`result`), that it
 * failed and nothing was sent (`told-failed`), that the call may have reached the upstream
 * (`may-have-sent`), or nothing usable because the replica died under the request (`unknown`).
 */
export type CreationOutcome = 'task' | 'result' | 'told-failed' | 'may-have-sent' | 'unknown';

export interface Creation {
  id: string;
  kind: Kind;
  tool: string;
  args: Record<string, unknown>;
  /** confirm_delete: the answer given. */
  confirm?: boolean;
  outcome?: CreationOutcome;
  error?: { code: number; message: string };
  taskId?: string;
  /** The dashboard's ref of the task (SHA-256 of the task id). */
  ref?: string;
  /** The synchronous result (greet) or the task's last `tasks/get` result. */
  result?: Record<string, unknown>;
  /** What the client saw go wrong while following the task. */
  problems: string[];
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: unknown): boolean {
  return TERMINAL.has(String(status));
}

/** `count` creations in a shuffled mix of every kind. */
export function planCreations(count: number): Creation[] {
  const kinds: Kind[] = [];
  for (let i = 0; kinds.length < count; i++) {
    for (const kind of KINDS) for (let n = 0; n < MIX[kind] && kinds.length < count; n++) kinds.push(kind);
  }
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as Kind, kinds[i] as Kind];
  }
  return kinds.map((kind, n) => {
    const id = `c${String(n).padStart(4, '0')}-${randomBytes(4).toString('hex')}`;
    const base = { id, kind, problems: [] };
    switch (kind) {
      case 'greet':
        return { ...base, tool: 'greet', args: { name: id } };
      case 'slow':
        // Half suggest a 2 s poll interval: their workflows may adopt the API's watch hub row
        // (tasks.hub.adoptApiEnlistment, on in stack.ts), the others (1 s) enlist their tasks themselves.
        return {
          ...base,
          tool: 'slow_compute',
          args: {
            seconds: 1 + Math.floor(Math.random() * 6),
            label: id,
            ...(Math.random() < 0.5 && { pollIntervalMs: 2000 }),
          },
        };
      case 'cancel':
        return { ...base, tool: 'slow_compute', args: { seconds: 900, label: id } };
      case 'confirm':
        return { ...base, tool: 'confirm_delete', args: { filename: id }, confirm: Math.random() < 0.5 };
      case 'failing':
        return { ...base, tool: 'failing_job', args: { run: id } };
      case 'protocolError':
        return { ...base, tool: 'protocol_error_job', args: { run: id } };
    }
  });
}

export interface WorkloadOptions {
  client: McpTestClient;
  /** No follow-up is tried after this (epoch ms). */
  deadline: number;
  pollMs?: number;
}

type Reply = { ok: true; reply: RpcReply } | { ok: false; detail: string };

/** One request; a dead replica (502, reset, refused, timeout) comes back as `ok: false`. */
async function send(
  client: McpTestClient,
  method: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown>,
  timeoutMs: number,
): Promise<Reply> {
  const attempt = client.request(method, params, { capabilities: caps });
  try {
    const reply = await Promise.race([
      attempt,
      sleep(timeoutMs).then(() => Promise.reject(new Error(`no answer in ${timeoutMs} ms`))),
    ]);
    if (reply.body === undefined || reply.body === null) return { ok: false, detail: `HTTP ${reply.status}` };
    return { ok: true, reply };
  } catch (err) {
    attempt.catch(() => undefined);
    return { ok: false, detail: err instanceof Error ? err.message : String(err) };
  }
}

/** The creation's request: its answer classifies it for good; it is never retried. */
async function create(c: Creation, client: McpTestClient): Promise<void> {
  const caps = c.kind === 'greet' ? {} : c.kind === 'confirm' ? TASKS_AND_FORM_CAPS : TASKS_CAPS;
  const sent = await send(client, 'tools/call', { name: c.tool, arguments: c.args }, caps, 200_000);
  if (!sent.ok) {
    c.outcome = 'unknown';
    c.problems.push(`creation: ${sent.detail}`);
    return;
  }
  const { result, error } = sent.reply.body;
  if (error) {
    c.error = { code: error.code, message: error.message };
    c.outcome =
      /nothing was sent/i.test(error.message) || error.code === -31002 ? 'told-failed' : 'may-have-sent';
    if (c.outcome === 'may-have-sent' && !/may (already )?have been (sent|delivered)/i.test(error.message)) {
      c.problems.push(
        `creation failed without saying whether the call was sent: ${error.code} ${error.message}`,
      );
    }
    return;
  }
  if (result?.resultType === 'task' && typeof result.taskId === 'string') {
    c.outcome = 'task';
    c.taskId = result.taskId;
    c.ref = taskKeyOf(result.taskId);
    return;
  }
  c.outcome = 'result';
  c.result = result;
}

/** A follow-up, retried while replicas die under it (it is safe to repeat), until answered or the deadline. */
async function followUp(
  c: Creation,
  opts: WorkloadOptions,
  method: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown> = TASKS_CAPS,
): Promise<RpcReply['body'] | undefined> {
  let notFound = 0;
  while (Date.now() < opts.deadline) {
    const sent = await send(opts.client, method, params, caps, 60_000);
    if (sent.ok) {
      const { error } = sent.reply.body;
      // A task the gateway returned must always be found; allow a moment for a store failover, no more.
      if (error?.code === -32602 && /not found/i.test(error.message) && ++notFound < 3) {
        await sleep(1000);
        continue;
      }
      // The engine or the store was briefly unavailable (a replica restarting): ask again.
      if (error && (error.code === -31002 || (sent.reply.status >= 500 && error.code !== -32602))) {
        await sleep(1000);
        continue;
      }
      return sent.reply.body;
    }
    await sleep(500 + Math.random() * 1000);
  }
  c.problems.push(`${method}: no answer before the deadline`);
  return undefined;
}

/** Polls `tasks/get` until `until(status)` or a terminal status; the last result, if any. */
async function poll(
  c: Creation,
  opts: WorkloadOptions,
  until: (status: string) => boolean,
): Promise<Record<string, unknown> | undefined> {
  for (;;) {
    const body = await followUp(c, opts, 'tasks/get', { taskId: c.taskId });
    if (!body) return undefined;
    if (body.error) {
      c.problems.push(`tasks/get: ${body.error.code} ${body.error.message}`);
      return undefined;
    }
    const result = body.result ?? {};
    c.result = result;
    const status = String(result.status);
    if (until(status) || isTerminal(status)) return result;
    await sleep((opts.pollMs ?? 1500) * (0.75 + Math.random() / 2));
  }
}

/** One creation, followed to its end. */
export async function runCreation(c: Creation, opts: WorkloadOptions): Promise<void> {
  await create(c, opts.client);
  if (c.outcome !== 'task') return;
  if (c.kind === 'cancel') {
    await sleep(300 + Math.random() * 2000);
    const ack = await followUp(c, opts, 'tasks/cancel', { taskId: c.taskId });
    if (ack?.error) c.problems.push(`tasks/cancel: ${ack.error.code} ${ack.error.message}`);
  }
  if (c.kind === 'confirm') {
    const asked = await poll(c, opts, (s) => s === 'input_required');
    if (asked?.status === 'input_required') {
      const inputResponses = { confirm: { action: 'accept', content: { confirm: c.confirm } } };
      const ack = await followUp(
        c,
        opts,
        'tasks/update',
        { taskId: c.taskId, inputResponses },
        TASKS_AND_FORM_CAPS,
      );
      if (ack?.error) c.problems.push(`tasks/update: ${ack.error.code} ${ack.error.message}`);
    }
  }
  await poll(c, opts, () => false);
}

/** Runs every creation, `concurrency` at a time, starting no new one after `startUntil`. */
export async function runWorkload(
  creations: Creation[],
  opts: WorkloadOptions & { concurrency: number; startUntil: number },
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < creations.length && Date.now() < opts.startUntil) {
      const c = creations[next++] as Creation;
      await runCreation(c, opts);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
}

export function newClient(baseUrl: string, project: string, token: string): McpTestClient {
  return new McpTestClient(`${baseUrl}/v1/mcp/${project}`).withToken(token);
}
