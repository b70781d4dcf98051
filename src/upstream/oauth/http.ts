/**
 * HTTP for OAuth: JSON documents and form posts to authorization servers, with a timeout and a size
 * bound, and errors that carry the server's OAuth error code and description but never a request or
 * response body (which could hold a token or a client secret).
 */

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

export interface JsonReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

/** Sends a request and reads a JSON object reply (any status); network failures are OAuthHttpErrors. */
export async function requestJson(url: string | URL, init: RequestInit = {}): Promise<JsonReply> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
    });
  } catch (err) {
    throw new OAuthHttpError(`${new URL(url).origin} could not be reached: ${(err as Error).name}`);
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
  return { status: res.status, headers: res.headers, body };
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
export async function getDocument(url: string | URL): Promise<Record<string, unknown> | undefined> {
  const reply = await requestJson(url);
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
): Promise<Record<string, unknown>> {
  const form = body instanceof URLSearchParams;
  const reply = await requestJson(url, {
    method: 'POST',
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', ...headers },
    body: form ? body.toString() : JSON.stringify(body),
  });
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
