/**
 * Random bytes from a pool (src/store/random-bytes.ts), which the cipher's IVs and payload ids come from:
 * never the same bytes twice, across refills of the pool, and a slice handed out stays as it was.
 */
import { pooledRandomBytes } from '../../src/store/random-bytes';
import { Cipher, generateKey } from '../../src/store/cipher';

test('hands out each byte once: 3,000 IVs (several refills of the pool) are all different and stay so', () => {
  const ivs = Array.from({ length: 3000 }, () => pooledRandomBytes(12));
  const copies = ivs.map((iv) => Buffer.from(iv).toString('hex'));
  expect(ivs.every((iv) => iv.length === 12)).toBe(true);
  expect(new Set(copies).size).toBe(3000);
  // Later refills do not write over what was handed out before.
  for (let i = 0; i < 2000; i++) pooledRandomBytes(16);
  expect(ivs.map((iv) => iv.toString('hex'))).toEqual(copies);
});

test('a request larger than the pool serves comes straight from the generator', () => {
  const big = pooledRandomBytes(4096);
  expect(big.length).toBe(4096);
  expect(big.equals(Buffer.alloc(4096))).toBe(false);
});

test('refuses a count that would move the pool back (bytes handed out twice)', () => {
  for (const n of [-1, 1.5, Number.NaN]) expect(() => pooledRandomBytes(n)).toThrow(RangeError);
  expect(pooledRandomBytes(0)).toHaveLength(0);
});

test('every sealed payload has an IV of its own', () => {
  const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } });
  // Layout: version(1) | keyIdLength(1) | keyId ("k1") | iv(12) | ciphertext | tag(16).
  const ivOf = (sealed: Buffer) => sealed.subarray(4, 16).toString('hex');
  const sealed = Array.from({ length: 1500 }, () => cipher.seal(Buffer.from('same'), 'aad'));
  expect(new Set(sealed.map(ivOf)).size).toBe(1500);
  expect(sealed.every((s) => cipher.open(s, 'aad').toString() === 'same')).toBe(true);
});
