/**
 * The era switch: which protocol each upstream speaks, found out by probing and remembered (in this
 * process by upstream identity, src/upstream/identity.ts, and in the store through `record`, from where endpoints
 * bring it back as `probe`).
 *
 * Probe: `server/discover` first (2026-07-28); if refused, `initialize` offering 2025-11-25 and accepting
 * any 2025 version, `notifications/initialized`, and the session ended again. Anything else (an HTML
 * page, a 2024 version, garbage) is no era the gateway speaks; an upstream that cannot be reached is
 * probed again on its next use. An upstream is probed on first use when it never was, and again when it
 * refuses the era it was called with (a 2025-style refusal of a 2026 request, or a 2025 session that
 * cannot be opened because the upstream now speaks 2026). A local (stdio) upstream is never probed over
 * HTTP: it goes to the 2025 adapter at once, and its probe is the handshake alone.
 */
import type { Meta, UpstreamProbe } from '../../protocol';
import {
  DiscoverResultSchema,
  LEGACY_PROTOCOL_VERSIONS,
  META,
  PROBE_FAILED,
  PROTOCOL_VERSION,
} from '../../protocol';
import { isStdioUrl } from '../../config/stdio';
import type { UpstreamEndpoint, UpstreamReply, UpstreamRequestOptions } from '../endpoint';
import { UpstreamAddressRefusedError, UpstreamTransportError } from '../errors';
import { upstreamKey } from '../identity';
import { STATUS } from '../transport/types';
import type { Era20251125Upstream } from './2025-11-25';
import { EraRefusedError } from './2025-11-25';
import { refusesEra20260728 } from './2025-11-25/refusals';

type Send20260728 = (
  endpoint: UpstreamEndpoint,
  method: string,
  params: Record<string, unknown> & { _meta: Meta },
  opts: UpstreamRequestOptions,
) => Promise<UpstreamReply>;

export interface EraSwitchDeps {
  /** The 2026-07-28 adapter (2026-07-28.ts). */
  era20260728: Send20260728;
  /** The 2025-era adapter (2025-11-25/). */
  era20251125: Pick<Era20251125Upstream, 'send' | 'handshake'>;
  record?: (upstreamId: string, probe: UpstreamProbe) => Promise<void>;
  warn: (message: string, detail: Record<string, unknown>) => void;
}

/** What this process knows: the probe, and whether the upstream answered at all. */
interface Known {
  probe: UpstreamProbe;
  /** It answered, but nothing the gateway speaks: not worth asking again at once. */
  answered: boolean;
  /** The address policy refused its address (no connection was made). */
  refused?: boolean;
}

/**
 * What this process knows is kept per upstream (its id and address, identity.ts) *and* trust: an address
 * an operator set and the same address set by a manager are probed (and refused) separately.
 */
function keyOf(endpoint: UpstreamEndpoint): string {
  return `${endpoint.addressApproved === true ? 'operator' : 'checked'}|${upstreamKey(endpoint)}`;
}

/** Each probe request's time limit. */
const PROBE_TIMEOUT_MS = 10_000;
/** An upstream that answered with no era the gateway speaks is not probed again sooner than this. */
const UNSUPPORTED_RETRY_MS = 10_000;
/** Refusals within this time of the last probe reuse it (a burst of requests probes once). */
const REPROBE_AFTER_MS = 2_000;

export class EraSwitch {
  private readonly known = new Map<string, Known>();
  private readonly probing = new Map<string, Promise<Known>>();

  constructor(private readonly deps: EraSwitchDeps) {}

  async send(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    // A local process speaks the 2025 session protocol: nothing to probe (transport/stdio.ts).
    if (isStdioUrl(endpoint.url)) return this.deps.era20251125.send(endpoint, method, params, opts);
    let known = this.current(endpoint);
    if (!known || (known.probe.era === null && !this.recentlyUnsupported(known))) {
      known = await this.reprobe(endpoint, 0);
    }
    const { era, error } = known.probe;
    if (era === 'legacy') return this.first20251125(endpoint, method, params, opts);
    if (era === 'modern') return this.first20260728(endpoint, method, params, opts);
    if (known.refused) throw new UpstreamAddressRefusedError(endpoint.alias);
    // Whoever set an address the operator did not hears no more of its probe than its view shows.
    const why = endpoint.addressApproved === true ? error : PROBE_FAILED;
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}": ${why ?? 'no MCP era the gateway speaks'}`,
      false,
    );
  }

  async probe(endpoint: UpstreamEndpoint): Promise<UpstreamProbe> {
    return (await this.reprobe(endpoint, 0)).probe;
  }

  private async first20260728(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    let reply: UpstreamReply;
    try {
      reply = await this.deps.era20260728(endpoint, method, params, opts);
    } catch (err) {
      if (!refusesEra20260728(method, err)) throw err;
      const known = await this.reprobe(endpoint, REPROBE_AFTER_MS);
      if (known.probe.era !== 'legacy') throw err;
      return this.deps.era20251125.send(endpoint, method, params, opts).catch(eraLost(endpoint));
    }
    if (!refusesEra20260728(method, reply)) return reply;
    const known = await this.reprobe(endpoint, REPROBE_AFTER_MS);
    if (known.probe.era !== 'legacy') return reply;
    return this.deps.era20251125.send(endpoint, method, params, opts).catch(eraLost(endpoint));
  }

  private async first20251125(
    endpoint: UpstreamEndpoint,
    method: string,
    params: Record<string, unknown> & { _meta: Meta },
    opts: UpstreamRequestOptions,
  ): Promise<UpstreamReply> {
    try {
      return await this.deps.era20251125.send(endpoint, method, params, opts);
    } catch (err) {
      if (!(err instanceof EraRefusedError)) throw err;
      const known = await this.reprobe(endpoint, REPROBE_AFTER_MS);
      if (known.probe.era !== 'modern') return eraLost(endpoint)(err);
      return this.deps.era20260728(endpoint, method, params, opts);
    }
  }

  /** The newer of what this process found out and what the endpoint brings from the store. */
  /** The era this process knows the upstream speaks (probed here or stored), without probing. */
  eraOf(endpoint: UpstreamEndpoint): 'legacy' | 'modern' | null | undefined {
    return this.current(endpoint)?.probe.era;
  }

  private current(endpoint: UpstreamEndpoint): Known | undefined {
    const mine = this.known.get(keyOf(endpoint));
    const stored = endpoint.probe;
    if (stored && (!mine || stored.probedAt > mine.probe.probedAt)) return { probe: stored, answered: false };
    return mine;
  }

  private recentlyUnsupported(known: Known): boolean {
    return known.answered && Date.now() - Date.parse(known.probe.probedAt) < UNSUPPORTED_RETRY_MS;
  }

  /** Probes unless this process did within `maxAgeMs`; one probe per upstream at a time. */
  private async reprobe(endpoint: UpstreamEndpoint, maxAgeMs: number): Promise<Known> {
    const key = keyOf(endpoint);
    const mine = this.known.get(key);
    if (mine && Date.now() - Date.parse(mine.probe.probedAt) < maxAgeMs) return mine;
    let pending = this.probing.get(key);
    if (!pending) {
      pending = this.runProbe(endpoint).finally(() => this.probing.delete(key));
      this.probing.set(key, pending);
    }
    // Recorded by every caller that waited for it: upstreams of several projects may share a URL.
    const known = await pending;
    await this.record(endpoint, known.probe);
    return known;
  }

  private async record(endpoint: UpstreamEndpoint, probe: UpstreamProbe): Promise<void> {
    if (!endpoint.upstreamId || !this.deps.record) return;
    await this.deps.record(endpoint.upstreamId, probe).catch((err: unknown) =>
      this.deps.warn('the probe of an upstream could not be recorded', {
        upstream: endpoint.alias,
        err: err instanceof Error ? err.message : String(err),
      }),
    );
  }

  private async runProbe(endpoint: UpstreamEndpoint): Promise<Known> {
    const probedAt = new Date().toISOString();
    const found = (era: 'modern' | 'legacy', version: string): Known => ({
      probe: { era, protocolVersion: version, probedAt, error: null },
      answered: true,
    });
    const failed = (error: string, answered: boolean): Known => ({
      probe: { era: null, protocolVersion: null, probedAt, error },
      answered,
    });
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    // Messages name the upstream already; the probe's error is shown next to it.
    const why = (err: unknown) =>
      (err instanceof Error ? err.message : String(err)).replace(`Upstream "${endpoint.alias}" `, '');
    // Probed without a credential it needs (per-user upstreams, from the admin API): no verdict yet,
    // probed again on first use with a caller's credential.
    const locked = (status: number | undefined) =>
      status === STATUS.unauthorized || status === STATUS.forbidden
        ? failed(`The upstream wants a credential the probe did not have (HTTP ${status})`, false)
        : undefined;
    let discover = 'not asked (a local process speaks the 2025 session protocol)';
    if (!isStdioUrl(endpoint.url))
      try {
        const reply = await this.deps.era20260728(
          endpoint,
          'server/discover',
          { _meta: { [META.protocolVersion]: PROTOCOL_VERSION, [META.clientCapabilities]: {} } },
          { signal },
        );
        const denied = locked(reply.kind === 'error' ? reply.httpStatus : undefined);
        if (denied) return this.remember(endpoint, denied);
        const parsed = reply.kind === 'result' ? DiscoverResultSchema.safeParse(reply.result) : undefined;
        if (parsed?.success && parsed.data.supportedVersions.includes(PROTOCOL_VERSION)) {
          return this.remember(endpoint, found('modern', PROTOCOL_VERSION));
        }
        discover =
          reply.kind === 'error'
            ? `HTTP ${reply.httpStatus}, ${reply.error.code} ${reply.error.message}`
            : parsed?.success
              ? `offers ${parsed.data.supportedVersions.join(', ')}`
              : 'an invalid result';
      } catch (err) {
        if (err instanceof UpstreamAddressRefusedError) {
          return this.remember(endpoint, { ...failed(err.message, false), refused: true });
        }
        if (err instanceof UpstreamTransportError && !err.mayHaveReached) {
          return this.remember(endpoint, failed(err.message, false));
        }
        const denied = locked(err instanceof UpstreamTransportError ? err.httpStatus : undefined);
        if (denied) return this.remember(endpoint, denied);
        discover = why(err);
      }
    try {
      const version = await this.deps.era20251125.handshake(endpoint, signal);
      return this.remember(endpoint, found('legacy', version));
    } catch (err) {
      const initialize = why(err);
      const speaks = [PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS].join(', ');
      return this.remember(
        endpoint,
        failed(
          `Not an MCP server the gateway speaks (${speaks}). server/discover: ${discover}. initialize: ${initialize}`,
          true,
        ),
      );
    }
  }

  private remember(endpoint: UpstreamEndpoint, known: Known): Known {
    this.known.set(keyOf(endpoint), known);
    // The detail of a failure is for the operator: managers' views show PROBE_FAILED instead.
    if (known.probe.error !== null)
      this.deps.warn('upstream probe failed', {
        project: endpoint.project,
        upstream: endpoint.alias,
        problem: known.probe.error,
      });
    return known;
  }
}

/**
 * A 2025 request refused although the probe says 2025: the refusal itself when it was an answer (a 2025
 * server's HTTP 400), else the upstream changed under us and the request fails.
 */
function eraLost(endpoint: UpstreamEndpoint) {
  return (err: unknown): UpstreamReply => {
    if (!(err instanceof EraRefusedError)) throw err;
    if (err.reply) return err.reply;
    throw new UpstreamTransportError(
      `Upstream "${endpoint.alias}" refused the 2025 protocol it answered the probe with: ${err.message}`,
      false,
    );
  };
}
