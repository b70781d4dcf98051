/**
 * Sessions of 2025-era clients without shared memory. The `Mcp-Session-Id` is the session itself, sealed
 * with the deployment's encryption keys (AES-256-GCM, key id inside, so key rotation keeps older sessions
 * valid): project, caller, negotiated version, the client's capabilities and an expiry. Any API replica
 * opens it; nothing is replicated. Only an ended session (`DELETE`) needs the store: its nonce is
 * remembered until the token would have expired anyway.
 *
 * The token is opaque to the client and carries nothing it could use elsewhere: sealing (not only
 * signing) keeps the caller's id and capabilities out of logs and proxies that record headers.
 */
import { randomBytes } from 'node:crypto';
import type { Implementation, LegacyClientCapabilities, LegacyProtocolVersion } from '../../../protocol';
import type { Cipher } from '../../../store/cipher';
import { SealedValues } from './sealed';

export interface LegacySession {
  projectId: string;
  /** `principalId` of the caller, `kind:id`. */
  caller: string;
  version: LegacyProtocolVersion;
  capabilities: LegacyClientCapabilities;
  clientInfo?: Implementation;
  /** Random; names the session when it is ended. */
  nonce: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export type NewSession = Omit<LegacySession, 'nonce' | 'expiresAt'>;

interface Sealed {
  p: string;
  c: string;
  v: LegacyProtocolVersion;
  cap: LegacyClientCapabilities;
  ci?: Implementation;
  n: string;
  exp: number;
}

export class SessionTokens {
  private readonly values: SealedValues<Sealed>;

  constructor(
    cipher: Cipher,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.values = new SealedValues(cipher, 'mcs1.', 'mcp-session:v1');
  }

  issue(session: NewSession): { token: string; session: LegacySession } {
    const full: LegacySession = {
      ...session,
      nonce: randomBytes(12).toString('base64url'),
      expiresAt: this.now() + this.ttlMs,
    };
    const sealed: Sealed = {
      p: full.projectId,
      c: full.caller,
      v: full.version,
      cap: full.capabilities,
      ...(full.clientInfo && { ci: full.clientInfo }),
      n: full.nonce,
      exp: full.expiresAt,
    };
    return { token: this.values.seal(sealed), session: full };
  }

  /** The session, or undefined when the token is malformed, forged, sealed by an unknown key, or expired. */
  open(token: string): LegacySession | undefined {
    const s = this.values.open(token);
    if (typeof s?.exp !== 'number' || s.exp <= this.now()) return undefined;
    return {
      projectId: s.p,
      caller: s.c,
      version: s.v,
      capabilities: s.cap,
      ...(s.ci && { clientInfo: s.ci }),
      nonce: s.n,
      expiresAt: s.exp,
    };
  }
}
