import { defaultPayloadConverter } from '@temporalio/common';
import { Cipher, generateKey } from '../../src/store/cipher';
import { EncryptionCodec } from '../../src/temporal/codec';

const text = (b: Uint8Array | null | undefined) => (b ? new TextDecoder().decode(b) : '');

describe('EncryptionCodec', () => {
  const codec = new EncryptionCodec(new Cipher({ activeKeyId: 'k1', keys: { k1: generateKey() } }));

  it('seals payloads that carry data, and opens them again', async () => {
    const secret = defaultPayloadConverter.toPayload({ arguments: { password: 'hunter2-secret' } });
    const [sealed] = await codec.encode([secret]);
    expect(text(sealed?.metadata?.['encoding'])).toBe('binary/encrypted');
    expect(Buffer.from(sealed?.data ?? []).includes('hunter2-secret')).toBe(false);
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({
      arguments: { password: 'hunter2-secret' },
    });
  });

  it('leaves a bare null (an empty heartbeat, a void result) as it is: it carries nothing', async () => {
    const nothing = defaultPayloadConverter.toPayload(undefined);
    expect(text(nothing.metadata?.['encoding'])).toBe('binary/null');
    const [encoded] = await codec.encode([nothing]);
    expect(encoded).toBe(nothing);
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toBeUndefined();
  });

  it('seals a "null" payload that carries data or other metadata anyway', async () => {
    const enc = new TextEncoder();
    const withData = { metadata: { encoding: enc.encode('binary/null') }, data: enc.encode('smuggled') };
    const withMeta = { metadata: { encoding: enc.encode('binary/null'), note: enc.encode('x') } };
    for (const p of await codec.encode([withData, withMeta])) {
      expect(text(p.metadata?.['encoding'])).toBe('binary/encrypted');
    }
  });
});
