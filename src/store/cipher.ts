/**
 * AES-256-GCM with key ids. Every ciphertext names the key that sealed it, so keys can rotate
 * without downtime: seal with the active key, open with whichever key the ciphertext names.
 * Associated data binds a ciphertext to its owner (e.g. a task and payload kind), so a blob copied
 * to another row fails to open.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { pooledRandomBytes } from './random-bytes';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 1;

export interface Keyring {
  activeKeyId: string;
  keys: Record<string, string>;
}

export class Cipher {
  private readonly keys = new Map<string, Buffer>();
  /** Digest keys derived from the active key, by purpose (see digest). */
  private readonly digestKeys = new Map<string, Buffer>();

  constructor(private readonly keyring: Keyring) {
    for (const [id, b64] of Object.entries(keyring.keys)) {
      const key = Buffer.from(b64, 'base64');
      if (key.length !== 32) throw new Error(`Encryption key "${id}" must be 32 bytes (base64)`);
      if (Buffer.byteLength(id) > 255) throw new Error(`Encryption key id "${id}" is too long`);
      this.keys.set(id, key);
    }
    if (!this.keys.has(keyring.activeKeyId)) {
      throw new Error(`Active encryption key "${keyring.activeKeyId}" is not in the keyring`);
    }
  }

  get activeKeyId(): string {
    return this.keyring.activeKeyId;
  }

  /** Layout: version(1) | keyIdLength(1) | keyId | iv(12) | ciphertext | tag(16). */
  seal(plaintext: Uint8Array, associatedData: string): Buffer {
    const keyId = Buffer.from(this.keyring.activeKeyId, 'utf8');
    const key = this.keys.get(this.keyring.activeKeyId) as Buffer;
    const iv = pooledRandomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION, keyId.length]), keyId, iv, body, cipher.getAuthTag()]);
  }

  open(sealed: Uint8Array, associatedData: string): Buffer {
    const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (buf.length < 2 || buf[0] !== VERSION) throw new Error('Unknown ciphertext format');
    const idLen = buf[1] as number;
    const keyId = buf.subarray(2, 2 + idLen).toString('utf8');
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`No encryption key "${keyId}" to open this ciphertext`);
    const ivStart = 2 + idLen;
    const iv = buf.subarray(ivStart, ivStart + IV_BYTES);
    const tag = buf.subarray(buf.length - TAG_BYTES);
    const body = buf.subarray(ivStart + IV_BYTES, buf.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  }

  /**
   * A keyed digest of `text` (HMAC-SHA-256, hex) for `purpose`, under a key derived from the active key
   * (HKDF-SHA-256): equal texts give equal digests, so two can be compared, but unlike a plain SHA-256 a
   * digest kept in the audit trail or shown to a reader cannot be tested against guesses of the text
   * (a low-entropy argument: an amount, a yes/no) by anyone without the key. A new active key gives new
   * digests.
   */
  digest(purpose: string, text: string): string {
    let key = this.digestKeys.get(purpose);
    if (!key) {
      const active = this.keys.get(this.keyring.activeKeyId) as Buffer;
      key = Buffer.from(hkdfSync('sha256', active, Buffer.alloc(0), `taskrouter digest: ${purpose}`, 32));
      this.digestKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(text, 'utf8').digest('hex');
  }

  sealJson(value: unknown, associatedData: string): Buffer {
    return this.seal(Buffer.from(JSON.stringify(value), 'utf8'), associatedData);
  }

  openJson<T>(sealed: Uint8Array, associatedData: string): T {
    return JSON.parse(this.open(sealed, associatedData).toString('utf8')) as T;
  }
}

export function generateKey(): string {
  return randomBytes(32).toString('base64');
}
