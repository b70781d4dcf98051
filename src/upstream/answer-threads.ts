/**
 * A small pool of worker threads that parse large upstream answers (answer-parse.ts) so the event loop
 * never runs JSON.parse, the key check or the result's preparation over megabytes. The thread script is
 * the caller's (the gateway's `answer-thread`, which adds the response processing). Its messages:
 * `{ id, op: 'parse', input, job }` (one answer at once), or a body in pieces: `{ id, op: 'chunks', list }`
 * as they arrive (about 1 MiB per message), then `{ id, op: 'end', job }` (or `{ id, op: 'drop' }`); it answers `parse` and `end`
 * with `{ id, outcome }` (a ParseOutcome). Threads start on first use and are unref'd: an idle pool holds no process open.
 * A thread that dies fails its jobs (as unreadable answers) and is replaced on the next job.
 */
import { Worker } from 'node:worker_threads';
import type { ParseJob, ParseOutcome } from './answer-parse';

export interface AnswerThreadsOptions {
  /** The thread's script (a .js file, or .ts when running from sources: loaded through tsx). */
  script: string;
  threads: number;
}

const BATCH_BYTES = 1024 * 1024;

/** A body handed to a thread chunk by chunk (AnswerThreads.open). */
export interface AnswerStream {
  /** Copies `chunk` (64 KiB at most from a socket: microseconds) and moves the copy to the thread. */
  push(chunk: Uint8Array): void;
  /** The body is complete: parse it under `job`. */
  finish(job: ParseJob): Promise<ParseOutcome>;
  /** The body is abandoned (a bound passed, the request failed): the thread forgets it. */
  drop(): void;
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

  /** Parses `input` on the least busy thread (a string is copied there, bytes are moved). */
  run(input: Uint8Array | string, job: ParseJob): Promise<ParseOutcome> {
    if (this.closed) return Promise.reject(new Error('The answer threads are closed'));
    const slot = this.pick();
    const id = this.nextId++;
    const done = this.settled(slot, id);
    if (typeof input === 'string') slot.worker.postMessage({ id, op: 'parse', input, job });
    else {
      const bytes = own(input);
      slot.worker.postMessage({ id, op: 'parse', input: bytes, job }, [bytes.buffer as ArrayBuffer]);
    }
    return done;
  }

  /** A body to hand over chunk by chunk, to the least busy thread. */
  open(): AnswerStream {
    const slot = this.pick();
    const id = this.nextId++;
    // Held from the start, so the thread's load counts when the next body picks one.
    let resolveDone: (o: ParseOutcome | Error) => void = () => {};
    const done = new Promise<ParseOutcome>((resolve, reject) => {
      resolveDone = (o) => (o instanceof Error ? reject(o) : resolve(o));
    });
    done.catch(() => {});
    slot.pending.set(id, (o) => resolveDone(o));
    // Chunks go over in batches: a message costs tens of microseconds, a 64 KiB copy a few.
    let batch: Uint8Array[] = [];
    let batched = 0;
    const flush = () => {
      if (batch.length === 0) return;
      const list = batch;
      batch = [];
      batched = 0;
      slot.worker.postMessage(
        { id, op: 'chunks', list },
        list.map((b) => b.buffer as ArrayBuffer),
      );
    };
    return {
      push: (chunk) => {
        const bytes = own(chunk);
        batch.push(bytes);
        batched += bytes.byteLength;
        if (batched >= BATCH_BYTES) flush();
      },
      finish: (job) => {
        flush();
        slot.worker.postMessage({ id, op: 'end', job });
        return done;
      },
      drop: () => {
        slot.pending.delete(id);
        slot.worker.postMessage({ id, op: 'drop' });
      },
    };
  }

  private settled(slot: Slot, id: number): Promise<ParseOutcome> {
    return new Promise<ParseOutcome>((resolve, reject) => {
      slot.pending.set(id, (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private pick(): Slot {
    if (this.closed) throw new Error('The answer threads are closed');
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

/** Bytes in an ArrayBuffer of their own, to move to a thread: a view into a shared one is copied. */
function own(input: Uint8Array): Uint8Array {
  const owned =
    input.byteOffset === 0 &&
    input.byteLength === input.buffer.byteLength &&
    input.buffer instanceof ArrayBuffer;
  return owned ? input : new Uint8Array(input);
}
