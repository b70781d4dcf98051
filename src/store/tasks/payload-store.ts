/**
 * Task payloads by id: stored encrypted (AES-256-GCM, the active key id inside every ciphertext) with
 * associated data binding each one to its id, task and kind, so a ciphertext copied elsewhere does not
 * open. Temporal histories and task rows hold only these ids.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { JsonRpcErrorObject } from '../../protocol';
import type { Cipher } from '../cipher';
import { pooledRandomBytes } from '../random-bytes';
import type { Database } from '../schema';

export type PayloadKind =
  | 'request'
  /** A synchronous answer to the first call (also what an attempt of it after a crash takes up). */
  | 'result'
  | 'error'
  | 'input_responses'
  | 'detail'
  /** The task id itself, for 2025-era clients' `tasks/list` (kept no longer than any payload). */
  | 'task_id'
  /** The upstream's id of the task the first call created, for a run of the call after a crash. */
  | 'upstream_task_id'
  /**
   * The input of a task workflow the API recorded before starting it (the first call made by the API):
   * what the creation reconciler starts it with if the API did not (src/temporal/creation-reconciler.ts).
   */
  | 'start_input'
  /** A hosted call was sent (or was about to be): an attempt after a lost worker may not send it again. */
  | 'hosted_sent'
  /**
   * Where a hosted call's answer could be taken up again after a lost worker (its session's stream): only
   * the latest matters, so it is stored with putLatest (one row per task and round).
   */
  | 'hosted_stream';

export class PayloadStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Stores a payload; `db` is a transaction when the payload belongs with other writes. */
  async put(
    taskKey: string,
    kind: PayloadKind,
    value: unknown,
    db: Kysely<Database> = this.db,
  ): Promise<string> {
    const id = `pl_${pooledRandomBytes(16).toString('base64url')}`;
    await db
      .insertInto('payloads')
      .values(this.row(id, taskKey, kind, value))
      .execute();
    return id;
  }

  /** A payload row: the value sealed under associated data that binds it to its id, task and kind. */
  private row(id: string, taskKey: string, kind: PayloadKind, value: unknown) {
    return {
      id,
      task_key: taskKey,
      kind,
      created_at: this.now().toISOString(),
      ciphertext: this.cipher.sealJson(value, aad(id, taskKey, kind)),
    };
  }

  /**
   * Stores a payload of which only the latest value matters (a hosted call's resume point, written while
   * the call runs): one row per task, kind and `slot`, replaced in place rather than added to. The row's
   * id is derived from the three, so the replacement is one upsert on either database, sealed under the
   * same associated data as any payload. A write that is older than the row (a slow write overtaken by
   * a later one) leaves it as it is. `created_at` is the time of the latest write: payload retention
   * counts from it.
   */
  async putLatest(taskKey: string, kind: PayloadKind, slot: string, value: unknown): Promise<string> {
    const id = slotId(taskKey, kind, slot);
    await this.db
      .insertInto('payloads')
      .values(this.row(id, taskKey, kind, value))
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            created_at: eb.ref('excluded.created_at'),
            ciphertext: eb.ref('excluded.ciphertext'),
          }))
          .where((eb) => eb('payloads.created_at', '<=', eb.ref('excluded.created_at'))),
      )
      .execute();
    return id;
  }

  /**
   * Stores a payload once per task, kind and `slot`: the first write wins and says so (`true`); any later
   * one stores nothing and answers `false`. One statement on either database (the row's id is derived
   * from the three, as in putLatest), so two writers racing for the same slot cannot both win: a claim.
   */
  async putOnce(taskKey: string, kind: PayloadKind, slot: string, value: unknown): Promise<boolean> {
    const result = await this.db
      .insertInto('payloads')
      .values(this.row(slotId(taskKey, kind, slot), taskKey, kind, value))
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** The first payload of this kind stored for a task (e.g. its request), if still kept. */
  async firstOf<T>(taskKey: string, kind: PayloadKind): Promise<T | undefined> {
    return (await this.firstOfKinds<T>(taskKey, [kind]))?.value;
  }

  /** The first payload of any of these kinds stored for a task, with its id and kind, if still kept. */
  async firstOfKinds<T>(
    taskKey: string,
    kinds: readonly PayloadKind[],
  ): Promise<{ id: string; kind: PayloadKind; value: T } | undefined> {
    const row = await this.db
      .selectFrom('payloads')
      .select(['id', 'kind', 'ciphertext'])
      .where('task_key', '=', taskKey)
      .where('kind', 'in', kinds)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    const kind = row.kind as PayloadKind;
    return { id: row.id, kind, value: this.cipher.openJson<T>(row.ciphertext, aad(row.id, taskKey, kind)) };
  }

  /** Every payload of this kind stored for a task, oldest first (for kinds a task holds a few of). */
  async allOf<T>(taskKey: string, kind: PayloadKind): Promise<T[]> {
    const rows = await this.db
      .selectFrom('payloads')
      .select(['id', 'ciphertext'])
      .where('task_key', '=', taskKey)
      .where('kind', '=', kind)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => this.cipher.openJson<T>(r.ciphertext, aad(r.id, taskKey, kind)));
  }

  /** Whether a payload of any of these kinds is stored for a task (nothing is decrypted). */
  async hasAnyOf(taskKey: string, kinds: readonly PayloadKind[]): Promise<boolean> {
    const row = await this.db
      .selectFrom('payloads')
      .select('id')
      .where('task_key', '=', taskKey)
      .where('kind', 'in', kinds)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Whether the payload is still kept (nothing is decrypted). */
  async exists(id: string, taskKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('payloads')
      .select('id')
      .where('id', '=', id)
      .where('task_key', '=', taskKey)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The payload, or undefined once retention removed it (or the id belongs to another task or kind). */
  async get<T>(id: string, taskKey: string, kind: PayloadKind): Promise<T | undefined> {
    const row = await this.db
      .selectFrom('payloads')
      .select('ciphertext')
      .where('id', '=', id)
      .where('task_key', '=', taskKey)
      .where('kind', '=', kind)
      .executeTakeFirst();
    return row ? this.cipher.openJson<T>(row.ciphertext, aad(id, taskKey, kind)) : undefined;
  }
}

/** The id of a task's payload of one kind in one `slot` (putLatest, putOnce): the same for every writer. */
function slotId(taskKey: string, kind: PayloadKind, slot: string): string {
  return `pl_${createHash('sha256').update(`${taskKey}:${kind}:${slot}`).digest('base64url').slice(0, 22)}`;
}

function aad(id: string, taskKey: string, kind: PayloadKind): string {
  return `payload:${id}:${taskKey}:${kind}`;
}

/** An upstream call's answer as stored (payload kinds `result`, `error`), with its payload id. */
export type RecordedAnswer =
  | { kind: 'result'; ref: string; result: Record<string, unknown> }
  | { kind: 'error'; ref: string; error: JsonRpcErrorObject };

/** The answer a payload read with firstOfKinds holds, if it is one (kind `result` or `error`). */
export function answerOf(
  payload: { id: string; kind: PayloadKind; value: unknown } | undefined,
): RecordedAnswer | undefined {
  if (payload?.kind === 'result') {
    return { kind: 'result', ref: payload.id, result: payload.value as Record<string, unknown> };
  }
  if (payload?.kind === 'error') {
    return { kind: 'error', ref: payload.id, error: payload.value as JsonRpcErrorObject };
  }
  return undefined;
}
