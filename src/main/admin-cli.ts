/**
 * `taskrouter admin <noun> <verb> [--flag value ...]`: the control-plane operations of the admin API,
 * run directly against the store database as the instance administrator (whoever can open the database
 * and its keys is the administrator). Output is JSON on stdout; tokens and keys are printed once, when
 * created. The database (SQLite or PostgreSQL) is the one configured by TASKROUTER_CONFIG (a JSON
 * configuration file, keys and the PostgreSQL URL optionally from the environment: keyring.ts), or else the embedded default of `npm start`
 * (`.data/taskrouter.db` and `.data/keys.json`, or TASKROUTER_DATA_DIR). See docs/admin.md.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config';
import { loadConfigFile, parseConfig } from '../config/config';
import { stdioAddressCheck } from '../config/stdio';
import { Cipher } from '../store/cipher';
import { ControlPlaneError, ControlPlaneStore } from '../store/control-plane';
import { openDatabase } from '../store/database';
import type { Database } from '../store/schema';
import { findRepoRoot } from '../config/paths';
import { ADMIN_OPERATIONS } from '../api/admin/operations';
import { UsageError } from '../api/admin/operations/cli-flags';
import { ApprovalDesk } from '../gateway/tasks/approval-desk';
import { ApprovalStore } from '../store/tasks/approvals';
import { PayloadStore } from '../store/tasks/payload-store';
import { createDataConverter } from '../temporal/codec';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { startProjectDeletion } from '../temporal/project-deletion';
import { triggerRetention } from '../temporal/schedules';
import { cliCommands, runCommand, usageText } from './admin-cli-commands';
import { applyBootstrap, loadBootstrapFile } from './bootstrap';
import { keyringFromEnv, keyringFromFile, withSecretsFromEnv } from './keyring';

/** The commands, from the table of admin operations (src/api/admin/operations). */
export const COMMANDS = cliCommands(ADMIN_OPERATIONS);

/** `taskrouter admin help`: written from the same table, so it names every command and flag. */
export const USAGE = usageText(COMMANDS);

export { UsageError };

/** What the CLI does through Temporal (docs/retention.md). */
export interface CliTemporal {
  runRetention(kind: 'payloads' | 'metadata'): Promise<unknown>;
  startProjectDeletion(projectId: string): Promise<{ workflowId: string }>;
}

/** Runs one command; returns what to print (JSON-serialisable). */
export async function runAdminCommand(
  cp: ControlPlaneStore,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  temporal?: CliTemporal,
  approvals?: ApprovalDesk,
): Promise<unknown> {
  const args = argv[0] === 'admin' ? argv.slice(1) : argv;
  return runCommand(COMMANDS, args, {
    cp,
    env,
    deps: {
      ...(approvals && { approvals }),
      ...(temporal && {
        runRetention: (kind) => temporal.runRetention(kind),
        startProjectDeletion: (projectId) => temporal.startProjectDeletion(projectId),
      }),
      bootstrap: async (file) => applyBootstrap(cp, loadBootstrapFile(file)),
    },
  });
}

/** The configuration the CLI works on: TASKROUTER_CONFIG, else the embedded default of `npm start`. */
export function cliConfig(env: NodeJS.ProcessEnv): Config {
  const file = env['TASKROUTER_CONFIG'];
  if (file) return parseConfig(withSecretsFromEnv(loadConfigFile(file), env), file);
  const keyring = keyringFromEnv(env);
  const dataDir = path.resolve(findRepoRoot(__dirname), env['TASKROUTER_DATA_DIR'] ?? '.data');
  return parseConfig({
    store: { sqliteFile: path.join(dataDir, 'taskrouter.db') },
    encryption: keyring ?? keyringFromFile(path.join(dataDir, 'keys.json')),
  });
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let db: Kysely<Database> | undefined;
  let connection: Connection | undefined;
  try {
    const args = argv[0] === 'admin' ? argv.slice(1) : argv;
    if (args.length === 0 || ['help', '--help', '-h'].includes(args[0] as string)) {
      process.stdout.write(USAGE);
      return 0;
    }
    const config = cliConfig(process.env);
    db = await openDatabase(config.store);
    const cipher = new Cipher(config.encryption);
    const cp = new ControlPlaneStore(db, cipher, {
      answerLimitCeilings: config.upstreams,
      // A stdio upstream names an entry of this configuration's catalog (docs/admin.md).
      checkStdioAddress: stdioAddressCheck(config.stdio.catalog),
    });
    const temporalClient = async () => {
      connection ??= await Connection.connect({ address: config.temporal.address, connectTimeout: '10s' });
      return new Client({
        connection,
        namespace: config.temporal.namespace,
        dataConverter: createDataConverter(cipher),
      });
    };
    const taskQueue = config.temporal.taskQueue;
    // Approve and deny reach the request's workflow; listing and showing need only the store.
    const approvals = new ApprovalDesk({
      approvals: new ApprovalStore(db),
      controlPlane: cp,
      payloads: new PayloadStore(db, cipher),
      engine: {
        decideApproval: async (workflowId, vote, timeoutMs) =>
          new TemporalTaskEngine(await temporalClient(), taskQueue).decideApproval(
            workflowId,
            vote,
            timeoutMs,
          ),
      },
    });
    const temporal: CliTemporal = {
      runRetention: async (kind) => triggerRetention(await temporalClient(), taskQueue, kind),
      startProjectDeletion: async (projectId) =>
        startProjectDeletion(await temporalClient(), taskQueue, projectId, config.retention.batchSize),
    };
    const result = await runAdminCommand(cp, args, process.env, temporal, approvals);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message ? `${err.message}\n\n` : ''}${USAGE}`);
      return 2;
    }
    const code = err instanceof ControlPlaneError ? ` (${err.code})` : '';
    process.stderr.write(`taskrouter admin: ${err instanceof Error ? err.message : String(err)}${code}\n`);
    return 1;
  } finally {
    await connection?.close();
    await db?.destroy();
  }
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`taskrouter admin failed: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
