import { createHash, randomBytes } from 'node:crypto';
import { Cipher, generateKey } from '../../src/store/cipher';

const k1 = generateKey();
const k2 = generateKey();
const AD = 'task:abc/result';

describe('Cipher', () => {
  const cipher = new Cipher({ activeKeyId: 'k1', keys: { k1 } });

  it('generateKey yields 32 random bytes in base64', () => {
    expect(Buffer.from(k1, 'base64')).toHaveLength(32);
    expect(k1).not.toBe(k2);
  });

  it('round-trips bytes and does not contain the plaintext', () => {
    const plaintext = Buffer.from('secret tool arguments: password=hunter2', 'utf8');
    const sealed = cipher.seal(plaintext, AD);
    expect(sealed.includes(plaintext)).toBe(false);
    expect(cipher.open(sealed, AD).equals(plaintext)).toBe(true);
  });

  it('round-trips empty and binary plaintexts', () => {
    expect(cipher.open(cipher.seal(new Uint8Array(0), AD), AD)).toHaveLength(0);
    const binary = randomBytes(1000);
    expect(cipher.open(cipher.seal(binary, AD), AD).equals(binary)).toBe(true);
  });

  it('opens a sealed value given as a Uint8Array view into a larger buffer', () => {
    const sealed = cipher.seal(Buffer.from('x'), AD);
    const backing = Buffer.concat([Buffer.from('prefix'), sealed, Buffer.from('suffix')]);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 6, sealed.length);
    expect(cipher.open(view, AD).toString()).toBe('x');
  });

  it('round-trips JSON', () => {
    const value = { a: [1, 'two', null], nested: { 'com.example/x': true }, text: 'Grüße' };
    expect(cipher.openJson(cipher.sealJson(value, AD), AD)).toEqual(value);
  });

  it('uses a fresh IV: sealing the same plaintext twice gives different ciphertexts', () => {
    const a = cipher.seal(Buffer.from('same'), AD);
    const b = cipher.seal(Buffer.from('same'), AD);
    expect(a.equals(b)).toBe(false);
  });

  it('names the sealing key in the ciphertext', () => {
    const sealed = cipher.seal(Buffer.from('x'), AD);
    expect(sealed[0]).toBe(1);
    expect(sealed[1]).toBe(2);
    expect(sealed.subarray(2, 4).toString()).toBe('k1');
    // version + id length + id + iv + 1 byte + tag
    expect(sealed).toHaveLength(2 + 2 + 12 + 1 + 16);
  });

  it('fails with other associated data', () => {
    const sealed = cipher.seal(Buffer.from('x'), AD);
    expect(() => cipher.open(sealed, 'task:other/result')).toThrow();
    expect(() => cipher.open(sealed, '')).toThrow();
  });

  it('fails when any byte of the IV, ciphertext or tag is changed', () => {
    const sealed = cipher.seal(Buffer.from('some plaintext'), AD);
    const headerLength = 2 + 2;
    for (let i = headerLength; i < sealed.length; i++) {
      const tampered = Buffer.from(sealed);
      tampered[i] = (tampered[i] as number) ^ 0x01;
      expect(() => cipher.open(tampered, AD)).toThrow();
    }
  });

  it('rejects an unknown format version and a truncated ciphertext', () => {
    const sealed = cipher.seal(Buffer.from('x'), AD);
    const wrongVersion = Buffer.from(sealed);
    wrongVersion[0] = 2;
    expect(() => cipher.open(wrongVersion, AD)).toThrow('Unknown ciphertext format');
    expect(() => cipher.open(Buffer.alloc(0), AD)).toThrow('Unknown ciphertext format');
    expect(() => cipher.open(sealed.subarray(0, sealed.length - 1), AD)).toThrow();
    expect(() => cipher.open(sealed.subarray(0, 10), AD)).toThrow();
  });

  describe('key rotation', () => {
    const old = new Cipher({ activeKeyId: 'k1', keys: { k1 } });
    const sealedWithK1 = old.seal(Buffer.from('before rotation'), AD);
    const rotated = new Cipher({ activeKeyId: 'k2', keys: { k1, k2 } });

    it('opens data sealed with a retired key that is still in the keyring', () => {
      expect(rotated.open(sealedWithK1, AD).toString()).toBe('before rotation');
    });

    it('seals new data with the active key', () => {
      expect(rotated.activeKeyId).toBe('k2');
      const sealed = rotated.seal(Buffer.from('after'), AD);
      expect(sealed.subarray(2, 2 + (sealed[1] as number)).toString()).toBe('k2');
      expect(() => old.open(sealed, AD)).toThrow('No encryption key "k2"');
    });

    it('fails with a clear error once the old key is dropped', () => {
      const k2Only = new Cipher({ activeKeyId: 'k2', keys: { k2 } });
      expect(() => k2Only.open(sealedWithK1, AD)).toThrow('No encryption key "k1" to open this ciphertext');
    });

    it('does not open with a different key under the same id', () => {
      const impostor = new Cipher({ activeKeyId: 'k1', keys: { k1: k2 } });
      expect(() => impostor.open(sealedWithK1, AD)).toThrow();
    });
  });

  describe('keyring validation', () => {
    it.each([
      ['16 bytes', randomBytes(16).toString('base64')],
      ['31 bytes', randomBytes(31).toString('base64')],
      ['33 bytes', randomBytes(33).toString('base64')],
      ['empty', ''],
    ])('rejects a key of %s', (_label, key) => {
      expect(() => new Cipher({ activeKeyId: 'k', keys: { k: key } })).toThrow(
        'Encryption key "k" must be 32 bytes (base64)',
      );
    });

    it('rejects an invalid key even when it is not the active one', () => {
      expect(() => new Cipher({ activeKeyId: 'k1', keys: { k1, bad: 'c2hvcnQ=' } })).toThrow(
        'Encryption key "bad" must be 32 bytes',
      );
    });

    it('requires the active key to be in the keyring', () => {
      expect(() => new Cipher({ activeKeyId: 'k3', keys: { k1, k2 } })).toThrow(
        'Active encryption key "k3" is not in the keyring',
      );
      expect(() => new Cipher({ activeKeyId: 'k1', keys: {} })).toThrow('is not in the keyring');
    });

    it('rejects a key id longer than 255 bytes (its length must fit in one byte)', () => {
      const id = 'x'.repeat(256);
      expect(() => new Cipher({ activeKeyId: id, keys: { [id]: k1 } })).toThrow('is too long');
      const max = 'y'.repeat(255);
      const c = new Cipher({ activeKeyId: max, keys: { [max]: k1 } });
      expect(c.open(c.seal(Buffer.from('ok'), AD), AD).toString()).toBe('ok');
    });
  });

  describe('digest', () => {
    const text = '{"amount":120}';
    it('is keyed: stable for one key and purpose, different for another key or purpose, never the plain SHA-256', () => {
      const c = new Cipher({ activeKeyId: 'k1', keys: { k1, k2 } });
      const d = c.digest('approval arguments', text);
      expect(d).toMatch(/^[0-9a-f]{64}$/);
      expect(c.digest('approval arguments', text)).toBe(d);
      expect(new Cipher({ activeKeyId: 'k1', keys: { k1 } }).digest('approval arguments', text)).toBe(d);
      expect(c.digest('approval arguments', '{"amount":121}')).not.toBe(d);
      expect(c.digest('another purpose', text)).not.toBe(d);
      expect(new Cipher({ activeKeyId: 'k2', keys: { k1, k2 } }).digest('approval arguments', text)).not.toBe(
        d,
      );
      expect(d).not.toBe(createHash('sha256').update(text).digest('hex'));
    });
  });
});
