/**
 * A small pool of worker threads that parse large upstream answers (answer-parse.ts) so the event loop
 * never runs JSON.parse, the key check or the result's preparation over megabytes. The thread script is
 * the caller's (the gateway's `answer-thread`, which adds the response processing); it answers each job
 * `{ id, input, job }` with `{ id, outcome }` (a ParseOutcome). Threads start on first use and are unref'd: an idle pool holds no process open.
 * A thread that dies fails its jobs (as unreadable answers) and is replaced on the next job.
 */
import { Worker } from 'node:worker_threads';
import type { ParseJob, ParseOutcome } from './answer-parse';

export interface AnswerThreadsOptions {
  /** The thread's script (a .js file, or .ts when running from sources: loaded through tsx). */
  script: string;
  threads: number;
}

interface Slot {
  worker: Worker;
  pending: Map<number, (outcome: ParseOutcome | Error) => void>;
}

export class AnswerThreads {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: AnswerThreadsOptions) {}

  /** Parses `input` on the least busy thread. A Buffer's memory is moved to the thread when it owns it. */
  run(input: Uint8Array | string, job: ParseJob): Promise<ParseOutcome> {
    if (this.closed) return Promise.reject(new Error('The answer threads are closed'));
    const slot = this.pick();
    const id = this.nextId++;
    return new Promise<ParseOutcome>((resolve, reject) => {
      slot.pending.set(id, (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
      if (typeof input === 'string') {
        slot.worker.postMessage({ id, input, job });
        return;
      }
      // A view into a larger buffer (Node's pool) is copied: moving its buffer would take the others' bytes.
      const owned =
        input.byteOffset === 0 &&
        input.byteLength === input.buffer.byteLength &&
        input.buffer instanceof ArrayBuffer;
      const bytes = owned ? input : new Uint8Array(input);
      slot.worker.postMessage({ id, input: bytes, job }, [bytes.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private pick(): Slot {
    let best: Slot | undefined;
    for (const s of this.slots) if (!best || s.pending.size < best.pending.size) best = s;
    if (best && (best.pending.size === 0 || this.slots.length >= this.opts.threads)) return best;
    return this.spawn();
  }

  private spawn(): Slot {
    const script = this.opts.script;
    // From TypeScript sources (tests, tsx) the thread loads it through tsx's require hook (a development
    // dependency); compiled code needs none.
    const worker = script.endsWith('.ts')
      ? new Worker(
          `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(script)});`,
          {
            eval: true,
          },
        )
      : new Worker(script);
    worker.unref();
    const slot: Slot = { worker, pending: new Map() };
    worker.on('message', (m: { id: number; outcome: ParseOutcome }) => {
      const done = slot.pending.get(m.id);
      slot.pending.delete(m.id);
      done?.(m.outcome);
    });
    const fail = (err: Error) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      for (const done of slot.pending.values()) done(err);
      slot.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`An answer thread exited (code ${code})`)));
    this.slots.push(slot);
    return slot;
  }
}
