/**
 * A call to the admin API (`/v1/admin`, docs/admin.md) as the tests make it: the method, the route below
 * `/v1/admin`, an optional JSON body, a bearer token; the status, the raw text and the parsed JSON body
 * (undefined when empty or not JSON). Each test file binds its own origin and default token.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of JSON bodies
export type AdminJson = Record<string, any>;

export interface AdminReply {
  status: number;
  text: string;
  body: AdminJson | undefined;
}

export async function adminCall(
  origin: string,
  token: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<AdminReply> {
  const res = await fetch(`${new URL(origin).origin}/v1/admin${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: AdminJson | undefined;
  try {
    parsed = text ? (JSON.parse(text) as AdminJson) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed };
}
