/**
 * HTTP for OAuth, under the gateway's rules: the fetch that oauth4webapi makes its requests with (its
 * `customFetch`), which goes through `via` (the address policy's dispatcher, src/upstream/address-policy.ts,
 * when the URLs come from an upstream a project manager set), gives up after a timeout and reads at most
 * MAX_BYTES of a reply; and the one translation of what oauth4webapi throws into OAuthHttpErrors, which
 * carry the server's OAuth error code and description but never a request or response body (which could
 * hold a token or a client secret).
 */
import * as oauth from 'oauth4webapi';
import type { Dispatcher } from 'undici';
import { fetch as undiciFetch } from 'undici';
import { ADDRESS_REFUSED } from '../address-policy';

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 1024 * 1024;

/** An authorization server or resource refused or failed; `oauthError` is its `error` code, if any. */
export class OAuthHttpError extends Error {
  override readonly name = 'OAuthHttpError';
  constructor(
    message: string,
    readonly status?: number,
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

/** The address policy refused the server's address (an upstream a manager set named it): nothing was sent. */
export class OAuthAddressRefusedError extends OAuthHttpError {
  constructor(origin: string) {
    super(`${origin} is in a network the gateway may not call for this upstream (upstreams.networks.allow)`);
  }
}

interface Request {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams;
}

/**
 * Sends a request and returns the reply with its body already read (at most MAX_BYTES), as a Response
 * that oauth4webapi can process; a refused address, an unreachable server or an oversized reply is an
 * OAuthHttpError.
 */
export async function guardedFetch(
  url: string | URL,
  init: Request = {},
  via?: Dispatcher,
): Promise<Response> {
  const origin = new URL(url).origin;
  let res: Awaited<ReturnType<typeof undiciFetch>>;
  try {
    res = await undiciFetch(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { accept: 'application/json', ...init.headers },
      ...(via && { dispatcher: via }),
    });
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code === ADDRESS_REFUSED) {
      throw new OAuthAddressRefusedError(origin);
    }
    throw new OAuthHttpError(`${origin} could not be reached: ${(err as Error).name}`);
  }
  const body = await boundedBody(res, origin);
  // A body is not allowed with these statuses (the Response constructor refuses one).
  const empty = res.status === 204 || res.status === 205 || res.status === 304;
  return new Response(empty ? null : body, {
    status: res.status,
    headers: res.headers as unknown as Headers,
  });
}

/** oauth4webapi's request options: the guarded fetch through `via`, and http:// allowed (loopback servers). */
export function requestOptions(via?: Dispatcher): {
  [oauth.customFetch]: NonNullable<
    oauth.HttpRequestOptions<'GET' | 'POST', unknown>[typeof oauth.customFetch]
  >;
  [oauth.allowInsecureRequests]: true;
} {
  return {
    [oauth.customFetch]: (url, init) =>
      guardedFetch(url, { method: init.method, headers: init.headers, body: init.body as never }, via),
    [oauth.allowInsecureRequests]: true,
  };
}

/**
 * The reply's bytes, read only up to MAX_BYTES: refused by its `content-length` before reading, else
 * counted while reading and cancelled the moment it passes (an OAuth document is a few KiB).
 */
async function boundedBody(res: Awaited<ReturnType<typeof undiciFetch>>, origin: string): Promise<Buffer> {
  const tooLarge = () => new OAuthHttpError(`${origin} sent a reply larger than ${MAX_BYTES} bytes`);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > MAX_BYTES) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof OAuthHttpError) throw err;
    throw new OAuthHttpError(`${origin} broke off its reply: ${(err as Error).name}`);
  }
  return Buffer.concat(chunks, bytes);
}

/** The JSON object in a reply, or undefined (none, or not an object). */
export async function jsonObject(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = JSON.parse(await res.text());
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as never)
      : undefined;
  } catch {
    return undefined;
  }
}

/** GET of a JSON document that must answer 200 with an object; undefined on 404, 410 or a redirect. */
export async function getDocument(
  url: string | URL,
  via?: Dispatcher,
): Promise<Record<string, unknown> | undefined> {
  const res = await guardedFetch(url, {}, via);
  if (res.status === 404 || res.status === 410 || (res.status >= 300 && res.status < 400)) return undefined;
  const body = res.status === 200 ? await jsonObject(res) : undefined;
  if (!body) {
    throw new OAuthHttpError(
      `${String(url)} answered HTTP ${res.status} without a JSON document`,
      res.status,
    );
  }
  return body;
}

/**
 * What oauth4webapi threw at `url` as an OAuthHttpError: an OAuth error answer with its code and
 * description, another unexpected status with that status, a malformed answer with what was wrong (the
 * library's message names the member, never its value). Our own OAuthHttpErrors (from the guarded
 * fetch) pass through. Nothing of the library's error is kept (its `cause` can hold the whole answer).
 */
async function oauthFailure(err: unknown, url: string | URL): Promise<OAuthHttpError> {
  if (err instanceof OAuthHttpError) return err;
  const origin = new URL(url).origin;
  const refused = (status: number, code?: string, description?: string) =>
    new OAuthHttpError(
      `${origin} refused (HTTP ${status}${code ? `, ${code}` : ''})${description ? `: ${description.slice(0, 300)}` : ''}`,
      status,
      code,
    );
  if (err instanceof oauth.ResponseBodyError) {
    return refused(
      err.status,
      err.error,
      typeof err.error_description === 'string' ? err.error_description : undefined,
    );
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    // A 401 with a `Basic` challenge (RFC 6749 §5.2 invalid_client) has its code in the body instead.
    const said: Record<string, unknown> | undefined =
      (err.cause.find((c) => typeof c.parameters.error === 'string')?.parameters as
        Record<string, unknown> | undefined) ?? (await jsonObject(err.response));
    const text = (key: string) => (typeof said?.[key] === 'string' ? (said[key] as string) : undefined);
    return refused(err.status, text('error'), text('error_description'));
  }
  if (err instanceof oauth.OperationProcessingError && err.cause instanceof Response) {
    return refused(err.cause.status);
  }
  if (err instanceof oauth.OperationProcessingError || err instanceof oauth.UnsupportedOperationError) {
    return new OAuthHttpError(`${origin} sent an answer the gateway cannot use: ${err.message}`);
  }
  return new OAuthHttpError(`${origin} could not be asked: ${(err as Error).name}`);
}

/** Runs oauth4webapi's request and answer check for `url`, its failures as OAuthHttpErrors. */
export async function asking<T>(url: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw await oauthFailure(err, url);
  }
}

/** A string member of a JSON document, or undefined. */
export function str(doc: Record<string, unknown>, key: string): string | undefined {
  const v = doc[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A string-array member of a JSON document (a single string counts as one), or undefined. */
export function strings(doc: Record<string, unknown>, key: string): string[] | undefined {
  const v = doc[key];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}
