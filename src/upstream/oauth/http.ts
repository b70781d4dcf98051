/**
 * HTTP for OAuth: JSON documents and form posts to authorization servers, with a timeout and a size
 * bound, and errors that carry the server's OAuth error code and description but never a request or
 * response body (which could hold a token or a client secret). `via`: the dispatcher to go through, when
 * the URLs come from an upstream a project manager set (the address policy's, src/upstream/address-policy.ts).
 */
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

export interface JsonReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

interface JsonRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Sends a request and reads a JSON object reply (any status); network failures are OAuthHttpErrors. */
export async function requestJson(
  url: string | URL,
  init: JsonRequest = {},
  via?: Dispatcher,
): Promise<JsonReply> {
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
    const origin = new URL(url).origin;
    if ((err as { cause?: { code?: string } }).cause?.code === ADDRESS_REFUSED) {
      throw new OAuthAddressRefusedError(origin);
    }
    throw new OAuthHttpError(`${origin} could not be reached: ${(err as Error).name}`);
  }
  const text = await boundedText(res, new URL(url).origin);
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    body =
      parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as never) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers as unknown as Headers, body };
}

/**
 * The reply's text, read only up to MAX_BYTES: refused by its `content-length` before reading, else
 * counted while reading and cancelled the moment it passes (an OAuth document is a few KiB).
 */
async function boundedText(res: Response, origin: string): Promise<string> {
  const tooLarge = () => new OAuthHttpError(`${origin} sent a reply larger than ${MAX_BYTES} bytes`);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!res.body) return '';
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
  return Buffer.concat(chunks, bytes).toString('utf8');
}

/** GET of a JSON document that must answer 200 with an object; undefined on 404 (try the next URL). */
export async function getDocument(
  url: string | URL,
  via?: Dispatcher,
): Promise<Record<string, unknown> | undefined> {
  const reply = await requestJson(url, {}, via);
  if (reply.status === 404 || reply.status === 410 || (reply.status >= 300 && reply.status < 400))
    return undefined;
  if (reply.status !== 200 || !reply.body) {
    throw new OAuthHttpError(
      `${String(url)} answered HTTP ${reply.status} without a JSON document`,
      reply.status,
    );
  }
  return reply.body;
}

/**
 * POSTs a form to a token, revocation or registration endpoint (`json` for registration) and returns
 * the JSON answer; an OAuth error answer becomes an OAuthHttpError with its code and description.
 */
export async function post(
  url: string,
  body: URLSearchParams | Record<string, unknown>,
  headers: Record<string, string> = {},
  via?: Dispatcher,
): Promise<Record<string, unknown>> {
  const form = body instanceof URLSearchParams;
  const reply = await requestJson(
    url,
    {
      method: 'POST',
      headers: {
        'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
        ...headers,
      },
      body: form ? body.toString() : JSON.stringify(body),
    },
    via,
  );
  if (reply.status >= 200 && reply.status < 300) return reply.body ?? {};
  const code = typeof reply.body?.['error'] === 'string' ? reply.body['error'] : undefined;
  const description =
    typeof reply.body?.['error_description'] === 'string'
      ? `: ${reply.body['error_description'].slice(0, 300)}`
      : '';
  throw new OAuthHttpError(
    `${new URL(url).origin} refused (HTTP ${reply.status}${code ? `, ${code}` : ''})${description}`,
    reply.status,
    code,
  );
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
