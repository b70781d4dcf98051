// The gateway's JSON API, the only server the dashboard talks to. A 401 anywhere but the sign-in call
// means the session is gone: back to the sign-in page. Each call names the view it reads
// (../view-types.ts, the shapes the server's routes send).
import { go } from './nav.js';
import { state } from './state.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const data: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    if (res.status === 401 && path !== '/v1/session') {
      state.user = null;
      go('#/signin');
    }
    const error = (data as ErrorBody | undefined)?.error;
    throw new ApiError(res.status, error?.code ?? 'error', error?.message ?? res.statusText);
  }
  return data as T;
}

/** What a failure says, whatever was thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
