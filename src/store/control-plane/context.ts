/**
 * What every control-plane module shares: the store database, the cipher that seals credentials, the
 * clock, the options the store was built with, and the cache of what MCP requests read. The modules are
 * plain functions over one `StoreContext`; `ControlPlaneStore` builds it and hands it to them.
 *
 * Transactions: a mutation and its audit record are written in one `ctx.transaction(...)`, so they
 * commit together or not at all. Transactions are never nested: helpers that write take the caller's
 * `Db` (the transaction), the operations themselves open it.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AnswerLimitCeilings } from '../../config/config';
import type { Cipher } from '../cipher';
import type { Database } from '../schema';
import { ControlPlaneError } from './errors';
import { ServingCache } from './serving-cache';
import type { ProjectRecord } from './types';

/** The database or a transaction on it: reads and the writes done inside an operation take either. */
export type Db = Kysely<Database> | Transaction<Database>;

/** What renewing an upstream authorization made by connecting with OAuth gives (renewal.ts). */
export interface RenewedTokens {
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
}

/**
 * Revokes a connection's tokens at the authorization server that issued them (RFC 7009), after the
 * connection was revoked here; best effort: it never throws (failures are its own to log, without the
 * tokens).
 */
export type RevokeAtServer = (r: {
  /** The `upstream_oauth_clients` row the tokens were issued to. */
  clientId: string;
  /**
   * That client as it was when the connection ended, when the row may be gone or rewritten by then (an
   * upstream re-pointed: its configured client's copy goes with its old address).
   */
  client?: { issuer: string; clientId: string; clientSecret?: string };
  accessToken: string;
  refreshToken: string | null;
  /** An operator approved the upstream's address: its authorization server is called without the address policy. */
  addressApproved: boolean;
}) => Promise<void>;

/** `rejected`: the server refused the refresh token; undefined: it could not be asked. */
export type RenewAuthorization = (r: {
  clientId: string;
  resource: string | null;
  refreshToken: string;
  /** An operator approved the upstream's address: its authorization server is called without the address policy. */
  addressApproved: boolean;
}) => Promise<RenewedTokens | 'rejected' | undefined>;

export interface ControlPlaneStoreOptions {
  /** Clock (tests). */
  now?: () => Date;
  /** Called after a project's rows are deleted (e.g. to stop its task workflows). */
  onProjectDeleted?: (project: ProjectRecord) => Promise<void>;
  /**
   * Checks a project configuration before a change that could make it unservable is written (today:
   * turning namespacing off while upstreams share names). Rejects with the reason.
   */
  validateProject?: (project: ProjectRecord) => Promise<void>;
  /**
   * The instance's answer bounds (`upstreams.maxResponseBytes`, `upstreams.callDeadlineMs`): a project's
   * `limits` may only lower them, and a value above is refused naming the field. Absent: not checked.
   */
  answerLimitCeilings?: AnswerLimitCeilings;
  /** How often the serving cache checks for changes made elsewhere (serving-cache.ts; default 250 ms). */
  changeCheckEveryMs?: number;
  /**
   * The public origin under which users connect `per_user` upstreams with OAuth (`connectUpstreams`):
   * a call that lacks the user's authorization then says where to connect.
   */
  connectBaseUrl?: string;
  /** Legacy `connectUpstreams`: every `per_user` upstream is connected with OAuth, not only those with `auth.oauth`. */
  connectAllPerUser?: boolean;
  /** Revokes a revoked connection's tokens at their authorization server (RFC 7009); absent, none is. */
  revokeAtServer?: RevokeAtServer;
  /** Renews an authorization made by connecting with OAuth (renewal.ts); absent, none renews. */
  renewAuthorization?: RenewAuthorization;
  /** RFC 8693 token exchange at an upstream's configured issuer (token-exchange.ts); absent, none. */
  exchangeToken?: ExchangeToken;
  /**
   * Refuses (rejects with the reason) an upstream URL a project manager may not use: the address policy
   * (src/upstream/address-policy.ts), which resolves the name. Absent, every address is accepted.
   */
  checkUpstreamAddress?: (url: string) => Promise<void>;
  /**
   * Refuses (throws with the reason) a `stdio:` address that names no entry of the operator's catalog or
   * gives a value the entry does not declare or allow (src/config/stdio.ts). Absent: every stdio address
   * is refused (the gateway runs no local processes).
   */
  checkStdioAddress?: (url: string) => void;
}

export class StoreContext {
  /** What MCP requests read, cached until a control-plane change (serving-cache.ts, audit.ts). */
  readonly serving: ServingCache;
  private readonly clock: () => Date;

  constructor(
    readonly db: Kysely<Database>,
    readonly cipher: Cipher,
    readonly options: ControlPlaneStoreOptions = {},
  ) {
    this.clock = options.now ?? (() => new Date());
    this.serving = new ServingCache(db, () => this.nowIso(), options.changeCheckEveryMs);
  }

  nowIso(): string {
    return this.clock().toISOString();
  }

  /** An expiry given by a caller, normalised; one that is not in the future is `invalid`. */
  futureIso(timestamp: string): string {
    const at = new Date(timestamp);
    if (at.getTime() <= this.clock().getTime()) {
      throw new ControlPlaneError('invalid', 'expiresAt must be in the future');
    }
    return at.toISOString();
  }

  /**
   * Runs `work` in one transaction: the one way operations write. The transaction also bumps the
   * control-plane generation, so every replica's serving cache drops what it read before the change.
   */
  async transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const result = await work(trx);
        await trx
          .updateTable('control_plane_generation')
          .set((eb) => ({ generation: eb('generation', '+', 1) }))
          .where('id', '=', 1)
          .execute();
        return result;
      });
    } finally {
      // Reads cached while the change was being written saw the old state.
      this.serving.clear();
    }
  }
}

/** A random id with a readable kind prefix (`prj_…`, `usr_…`); ids are not secrets. */
export function newId(kind: string): string {
  return `${kind}_${randomBytes(12).toString('hex')}`;
}

/** Runs an insert; a unique-constraint violation becomes a `conflict` with the given message. */
export async function insertUnique(
  query: { execute(): Promise<unknown> },
  conflictMessage: string,
): Promise<void> {
  try {
    await query.execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ControlPlaneError('conflict', conflictMessage);
    throw err;
  }
}

/** SQLite (better-sqlite3) and PostgreSQL (pg, SQLSTATE 23505) unique-constraint violations. */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** Exchanges a caller's access token at `issuer` (main/upstream-renewal.ts); throws when it cannot. */
export type ExchangeToken = (r: {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  audience?: string;
  scope?: string;
  /** The upstream's URL (RFC 8707 `resource`). */
  resource: string;
  subjectToken: string;
  /** An operator set the upstream: the issuer is reached directly, else through the address policy. */
  addressApproved: boolean;
}) => Promise<{ accessToken: string; expiresAt?: number }>;
