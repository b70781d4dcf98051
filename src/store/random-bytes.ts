/**
 * Random bytes from the system's generator, fetched 8 KiB at a time. One call of `randomBytes` is a
 * synchronous OpenSSL call that costs about as much as sealing a small payload with AES-GCM (some 15 µs
 * each, Node 20), and the gateway takes a request id per request and a random IV and payload id for
 * several payloads per task change. Every byte handed out is used once; a used-up pool is replaced by a
 * new buffer, so a slice handed out earlier is never overwritten. Secrets (tokens, keys) keep their own
 * calls: none is frequent.
 */
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 8192;
/** Larger requests are not worth pooling: they come straight from the generator. */
const MAX_POOLED = 256;

let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `n` random bytes. The buffer is a view of the pool: copy or encode it, never transfer it to another
 * thread (that would detach the pool) nor hand out its `.buffer`.
 */
export function pooledRandomBytes(n: number): Buffer {
  // A negative or fractional count would move the offset back and hand out bytes again.
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`pooledRandomBytes: not a byte count: ${n}`);
  if (n > MAX_POOLED) return randomBytes(n);
  if (offset + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + n);
  offset += n;
  return bytes;
}
