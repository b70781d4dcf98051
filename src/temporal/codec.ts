/**
 * Encrypts every Temporal payload that carries data (workflow inputs, activity results, signals, queries,
 * memos) with the gateway's AES-256-GCM keyring, so tool arguments and results are never plaintext in
 * Temporal history or the Web UI. Failures are encoded too (`encodeCommonAttributes`), since upstream error messages can
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
    return payloads.map((payload) => (isBareNull(payload) ? payload : this.seal(payload)));
  }

  private seal(payload: Payload): Payload {
    return {
      metadata: {
        encoding: new TextEncoder().encode(ENCODING),
        'encryption-key-id': new TextEncoder().encode(this.cipher.activeKeyId),
      },
      data: this.cipher.seal(temporal.api.common.v1.Payload.encode(payload).finish(), AAD),
    };
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      if (!encoding || new TextDecoder().decode(encoding) !== ENCODING || !payload.data) return payload;
      return temporal.api.common.v1.Payload.decode(this.cipher.open(payload.data, AAD));
    });
  }
}

/**
 * `undefined`/`null` as the SDK encodes it: `encoding: binary/null` and nothing else. It carries no data,
 * so sealing it protects nothing, and every heartbeat of every watch activity is one (the SDK encodes the
 * details before it throttles heartbeats): left as it is, it costs no AES-GCM and no random IV. Anything
 * with data or other metadata is sealed.
 */
function isBareNull(payload: Payload): boolean {
  const metadata = payload.metadata ?? {};
  const keys = Object.keys(metadata);
  const encoding = metadata['encoding'];
  return (
    keys.length === 1 &&
    encoding !== undefined &&
    encoding !== null &&
    new TextDecoder().decode(encoding) === NULL_ENCODING &&
    (payload.data === undefined || payload.data === null || payload.data.length === 0)
  );
}
const NULL_ENCODING = 'binary/null';

export function createDataConverter(cipher: Cipher): DataConverter {
  return {
    payloadCodecs: [new EncryptionCodec(cipher)],
    failureConverterPath: require.resolve('./failure-converter'),
  };
}
