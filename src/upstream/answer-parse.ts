/**
 * Parsing one upstream answer (a JSON body, or the data of one SSE event) and checking its shape bounds:
 * pure, no I/O, the same code on the event loop (small answers) and on a worker thread (large ones,
 * answer-threads.ts). The worker thread may also prepare the result it finds (the gateway's response
 * processing, cut to the project's limit) so a large result never reaches the event loop whole.
 */

/**
 * What the gateway asks a worker thread to do to a result, as data (the thread's script knows the kinds).
 * `legacy` is set by the upstream client for a 2025-era answer: its result has no `resultType` yet (the
 * 2026 model reads a plain `tools/call` result as `complete`).
 */
export type AnswerPreparation = Readonly<{ kind: string; legacy?: boolean } & Record<string, unknown>>;

export interface ParseJob {
  /** Most distinct key names the answer may use (`upstreams.maxAnswerKeys`); checked when `checkKeys`. */
  maxAnswerKeys: number;
  checkKeys: boolean;
  /** Applied to the `result` of a JSON-RPC response, where the answer is parsed. */
  prepare?: AnswerPreparation;
}

export type ParseOutcome =
  | { ok: true; message: unknown; prepared: boolean }
  | { ok: false; reason: 'json' }
  | { ok: false; reason: 'keys' }
  /** The preparation refused the result: the gateway's error as data. */
  | { ok: false; reason: 'refused'; refusal: { kind: string; message: string; data?: unknown } };

/** Turns a preparation into the new result, or throws what `refusalOf` understands. */
export type Prepare = (
  result: Record<string, unknown>,
  preparation: AnswerPreparation,
) => Record<string, unknown>;
export type RefusalOf = (err: unknown) => { kind: string; message: string; data?: unknown } | undefined;

const decoder = new TextDecoder();

export function parseAnswer(
  input: Uint8Array | string,
  job: ParseJob,
  prep?: { prepare: Prepare; refusalOf: RefusalOf },
): ParseOutcome {
  let message: unknown;
  try {
    message = JSON.parse(typeof input === 'string' ? input : decoder.decode(input));
  } catch {
    return { ok: false, reason: 'json' };
  }
  if (job.checkKeys && hasMoreKeysThan(message, job.maxAnswerKeys)) return { ok: false, reason: 'keys' };
  if (!job.prepare || !prep || !isObject(message) || !isObject(message.result) || message.error !== undefined)
    return { ok: true, message, prepared: false };
  try {
    return {
      ok: true,
      message: { ...message, result: prep.prepare(message.result, job.prepare) },
      prepared: true,
    };
  } catch (err) {
    const refusal = prep.refusalOf(err);
    if (!refusal) throw err;
    return { ok: false, reason: 'refused', refusal };
  }
}

/**
 * Whether `value` uses more than `max` distinct key names (at any depth). What a parsed answer costs the
 * event loop grows with them: a 50,000-key `_meta`, or thousands of small objects each with keys of its
 * own (every new name is a new object shape), cost tens to hundreds of milliseconds per MiB to copy,
 * while the same MiB of rows sharing their keys costs a few. Iterative: depth cannot overflow the stack.
 */
export function hasMoreKeysThan(value: unknown, max: number): boolean {
  const names = new Set<string>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key in v) {
      names.add(key);
      if (names.size > max) return true;
      const item = (v as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return false;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
