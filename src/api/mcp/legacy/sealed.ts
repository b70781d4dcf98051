/**
 * Small values the gateway hands a 2025-era client and gets back later, from any replica: sealed with
 * the deployment's keys (AES-256-GCM, key id inside), so they are opaque, unforgeable and survive key
 * rotation. Each kind has its own prefix and associated data, so one kind never opens as another.
 */
import type { Cipher } from '../../../store/cipher';

export class SealedValues<T extends object> {
  constructor(
    private readonly cipher: Cipher,
    private readonly prefix: string,
    private readonly aad: string,
  ) {}

  seal(value: T): string {
    return this.prefix + this.cipher.sealJson(value, this.aad).toString('base64url');
  }

  /** The value, or undefined for anything that is not a value of this kind sealed by this deployment. */
  open(token: unknown): T | undefined {
    if (typeof token !== 'string' || !token.startsWith(this.prefix) || token.length > 8192) return undefined;
    try {
      return this.cipher.openJson<T>(Buffer.from(token.slice(this.prefix.length), 'base64url'), this.aad);
    } catch {
      return undefined;
    }
  }
}
