/**
 * Server-sent events framed at the byte level (the WHATWG event-stream rules the gateway needs: lines
 * ending in CRLF, LF or CR, comments, `data` fields joined by LF, a blank line dispatching, a leading BOM
 * skipped; `event` and `retry` are not used by MCP's JSON-RPC streams and are skipped too). `id` is kept
 * as the stream's last event id (what a resumption names in `Last-Event-ID`).
 *
 * Bytes, not text, because an event may be an answer of many megabytes: its data stays in the pieces
 * the socket delivered (no copy, no string) until it is complete, so a large one can go to a worker
 * thread as it is (answers.ts), and an event that passes `maxEventBytes` (a line that never ends, or
 * data lines without a blank line) is refused the moment it does. UTF-8 never puts CR, LF or `:` inside a
 * multi-byte character, so splitting bytes there is splitting characters there.
 */

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const NEWLINE = Buffer.from('\n');
const DATA = Buffer.from('data');
const BOM = [0xef, 0xbb, 0xbf];

export class SseFramer {
  /** Pieces of the line being read (views into the chunks, not copies). */
  private line: Buffer[] = [];
  private lineBytes = 0;
  /** The current event's data so far: values of its `data` lines, LF between them. */
  private data: Buffer[] = [];
  private dataBytes = 0;
  private dataLines = 0;
  /** The last chunk ended in CR: an LF starting the next one belongs to that line end. */
  private skipLF = false;
  private bomChecked = false;
  /** The event passed `maxEventBytes`: nothing more is read. */
  overflowed = false;
  /** The last event id the stream set (WHATWG: kept across events until another `id` line). */
  lastEventId: string | undefined;

  constructor(
    private readonly maxEventBytes: number,
    /**
     * A complete event: its data's pieces (joined, they are the data) and their length, and the stream's
     * last event id; an event without data only when it set an id (a resumption point).
     */
    private readonly onEvent: (data: Buffer[], bytes: number, lastEventId: string | undefined) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    let start = 0;
    if (!this.bomChecked && chunk.length > 0) {
      this.bomChecked = true;
      if (chunk.length >= 3 && BOM.every((b, i) => chunk[i] === b)) start = 3;
    }
    if (this.skipLF && chunk[start] === LF) start++;
    this.skipLF = false;
    // Next CR and LF from `start`, searched again only once passed (a chunk of short lines and no CR
    // would otherwise be scanned to its end for a CR at every line).
    let cr = -2;
    let lf = -2;
    while (start < chunk.length) {
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) {
        this.addToLine(chunk.subarray(start));
        break;
      }
      this.addToLine(chunk.subarray(start, end));
      if (this.overflowed) return;
      this.endLine();
      start = end + 1;
      if (chunk[end] === CR) {
        if (start === chunk.length) this.skipLF = true;
        else if (chunk[start] === LF) start++;
      }
    }
  }

  private addToLine(piece: Buffer): void {
    if (piece.length === 0) return;
    this.line.push(piece);
    this.lineBytes += piece.length;
    if (this.dataBytes + this.lineBytes > this.maxEventBytes) {
      this.overflowed = true;
      this.line = [];
      this.data = [];
    }
  }

  private endLine(): void {
    const pieces = this.line;
    const bytes = this.lineBytes;
    this.line = [];
    this.lineBytes = 0;
    if (bytes === 0) {
      this.dispatch();
      return;
    }
    const value = dataValue(pieces, bytes);
    if (value === undefined) {
      this.takeId(pieces, bytes);
      return; // a comment, or a field MCP streams do not use
    }
    if (this.dataLines > 0) {
      this.data.push(NEWLINE);
      this.dataBytes += 1;
    }
    this.data.push(...value.pieces);
    this.dataBytes += value.bytes;
    this.dataLines++;
    if (this.dataBytes > this.maxEventBytes) {
      this.overflowed = true;
      this.data = [];
    }
  }

  private dispatch(): void {
    const { data, dataBytes, dataLines } = this;
    this.data = [];
    this.dataBytes = 0;
    this.dataLines = 0;
    if (dataLines > 0 || this.idSet) this.onEvent(data, dataBytes, this.lastEventId);
    this.idSet = false;
  }

  /** The event set an id (since the last dispatch). */
  private idSet = false;

  /** An `id` line sets the last event id (a value with NUL is ignored, as WHATWG says). */
  private takeId(pieces: Buffer[], bytes: number): void {
    if (bytes < 2 || bytes > 1024) return;
    const line = Buffer.concat(pieces, bytes).toString('utf8');
    const match = /^id(?::( ?)(.*))?$/.exec(line);
    if (!match) return;
    const value = match[2] ?? '';
    if (value.includes('\0')) return;
    this.lastEventId = value;
    this.idSet = true;
  }
}

/** The value of a `data` line (`data`, `data:` or `data: `, then the value), as pieces; else undefined. */
function dataValue(pieces: Buffer[], bytes: number): { pieces: Buffer[]; bytes: number } | undefined {
  const head = headOf(pieces, 6);
  if (!DATA.every((b, i) => head[i] === b)) return undefined;
  if (bytes === DATA.length) return { pieces: [], bytes: 0 };
  if (head[4] !== 0x3a) return undefined; // `datax…`: another field
  const skip = head[5] === SPACE ? 6 : 5;
  return { pieces: dropHead(pieces, skip), bytes: bytes - skip };
}

/** The first `n` bytes of the pieces (fewer if they hold fewer). */
function headOf(pieces: Buffer[], n: number): number[] {
  const out: number[] = [];
  for (const p of pieces) {
    for (let i = 0; i < p.length && out.length < n; i++) out.push(p[i] as number);
    if (out.length >= n) break;
  }
  return out;
}

/** The pieces without their first `n` bytes. */
function dropHead(pieces: Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  let left = n;
  for (const p of pieces) {
    if (left >= p.length) {
      left -= p.length;
      continue;
    }
    out.push(left > 0 ? p.subarray(left) : p);
    left = 0;
  }
  return out;
}
