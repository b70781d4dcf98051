/**
 * DNS-rebinding protection: a gateway listening on loopback answers only requests addressed to a
 * loopback name, and browsers only from loopback or configured origins.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface OriginPolicy {
  listenHost: string;
  allowedOrigins: readonly string[];
  allowedHosts: readonly string[];
}

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return '';
  }
}

/** Why the request is refused, or undefined when it may proceed. */
export function refuseOrigin(policy: OriginPolicy, host: string, origin: string): string | undefined {
  const onLoopback = LOOPBACK.has(policy.listenHost);
  if (
    policy.allowedHosts.length > 0
      ? !policy.allowedHosts.includes(host)
      : onLoopback && !LOOPBACK.has(hostnameOf(host))
  ) {
    return 'Host not allowed';
  }
  if (origin === '') return undefined;
  if (policy.allowedOrigins.includes(origin)) return undefined;
  let originHost = '';
  try {
    originHost = new URL(origin).hostname.toLowerCase();
  } catch {
    return 'Origin not allowed';
  }
  return onLoopback && LOOPBACK.has(originHost) ? undefined : 'Origin not allowed';
}
