/**
 * Encrypts every Temporal payload (workflow inputs, activity results, signals, queries, memos) with the
 * gateway's AES-256-GCM keyring, so tool arguments and results are never plaintext in Temporal history
 * or the Web UI. Failures are encoded too (`encodeCommonAttributes`), since upstream error messages can
 * echo arguments.
 */
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Cipher } from '../store/cipher';

const ENCODING = 'binary/encrypted';
const AAD = 'temporal-payload';

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly cipher: Cipher) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: {
        encoding: new TextEncoder().encode(ENCODING),
        'encryption-key-id': new TextEncoder().encode(this.cipher.activeKeyId),
      },
      data: this.cipher.seal(temporal.api.common.v1.Payload.encode(payload).finish(), AAD),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      if (!encoding || new TextDecoder().decode(encoding) !== ENCODING || !payload.data) return payload;
      return temporal.api.common.v1.Payload.decode(this.cipher.open(payload.data, AAD));
    });
  }
}

export function createDataConverter(cipher: Cipher): DataConverter {
  return {
    payloadCodecs: [new EncryptionCodec(cipher)],
    failureConverterPath: require.resolve('./failure-converter'),
  };
}
