/**
 * The admin API's routes, derived from the table of operations: each operation with an HTTP binding is
 * a route (method, `:name` path, handler) for src/api/route-table.ts. The handler builds the operation's
 * input from the path parameters and the body (POST, PUT, PATCH) or the query string (GET, DELETE),
 * checks it with the operation's schema (a rejection is a 400 `invalid`: src/api/rest-errors.ts), runs
 * it and turns the result into the reply.
 */
import type { z } from 'zod';
import type { ControlPlaneStore } from '../../../store/control-plane';
import type { Reply } from '../../route-table';
import { HttpError } from '../../rest-errors';
import type { AdminRequest } from '../route';
import type { AdminOperation, HttpBinding, OperationDeps } from './define';
import { readInput } from './define';

export interface AdminRoute {
  method: string;
  /** `/teams/:team`, as the table says it. */
  path: string;
  operation: AdminOperation;
  handler: (cp: ControlPlaneStore, req: AdminRequest, deps: OperationDeps) => Promise<Reply>;
}

/** The `:name` segments of a path, in order. */
export function pathNames(path: string): string[] {
  return [...path.matchAll(/:([a-zA-Z]+)/g)].map((m) => m[1] as string);
}

/** The query parameters the schema names (others are ignored, as they always were). */
export function queryInput(schema: z.ZodObject, query: URLSearchParams): Record<string, unknown> {
  const keys = Object.keys(schema.shape).filter((k) => query.has(k));
  return Object.fromEntries(keys.map((k) => [k, query.get(k)]));
}

/** A body with the path's parameters; a body naming one of them is refused rather than overruled. */
export function bodyInput(body: Record<string, unknown>, fromPath: Record<string, unknown>) {
  const clash = Object.keys(fromPath).find((name) => Object.hasOwn(body, name));
  if (clash !== undefined) throw new HttpError('invalid', `"${clash}" is named by the path, not the body`);
  return { ...body, ...fromPath };
}

function requestInput(http: HttpBinding<unknown>, schema: z.ZodObject, req: AdminRequest) {
  const names = pathNames(http.path);
  const fromPath = Object.fromEntries(names.map((name, i) => [name, req.params[i]]));
  if (http.bodyKey !== undefined) return { [http.bodyKey]: req.body, ...fromPath };
  if (!['POST', 'PUT', 'PATCH'].includes(http.method))
    return { ...queryInput(schema, req.query), ...fromPath };
  return bodyInput(req.body, fromPath);
}

function replyOf(http: HttpBinding<unknown>, result: unknown): Reply {
  if (http.reply) return http.reply(result);
  return result === undefined ? undefined : { status: http.status ?? 200, body: result };
}

export function adminRoutes(operations: readonly AdminOperation[]): AdminRoute[] {
  return operations.flatMap((operation) => {
    const { http } = operation;
    if (!http) return [];
    return [
      {
        method: http.method,
        path: http.path,
        operation,
        handler: async (cp, req, deps) => {
          operation.allow?.(req.actor);
          const input = readInput(operation.input, requestInput(http, operation.input, req));
          return replyOf(http, await operation.run(input, { actor: req.actor, cp, deps }));
        },
      },
    ];
  });
}
