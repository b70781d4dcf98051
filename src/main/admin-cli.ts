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
import type { NewProject, ProjectPatch, UpstreamPatch } from '../store/control-plane';
import { ControlPlaneError, ControlPlaneStore } from '../store/control-plane';
import type { Principal } from '../store/control-plane/types';
import { openDatabase } from '../store/database';
import type { Database } from '../store/schema';
import { findRepoRoot } from '../config/paths';
import { ApprovalDesk } from '../gateway/tasks/approval-desk';
import { ApprovalStore } from '../store/tasks/approvals';
import { PayloadStore } from '../store/tasks/payload-store';
import { createDataConverter } from '../temporal/codec';
import { TemporalTaskEngine } from '../temporal/task-engine';
import { startProjectDeletion } from '../temporal/project-deletion';
import { triggerRetention } from '../temporal/schedules';
import {
  authInput,
  credential,
  hostingInput,
  json,
  need,
  onOff,
  parseFlags,
  UsageError,
} from './admin-cli-flags';
import type { Flags } from './admin-cli-flags';
import { APPROVAL_NOUNS, APPROVAL_USAGE, runApprovalCommand } from './admin-cli-approvals';
import { applyBootstrap, loadBootstrapFile } from './bootstrap';
import { keyringFromEnv, keyringFromFile, withSecretsFromEnv } from './keyring';

export const USAGE = `usage: taskrouter admin <command> [--flag value ...]

  team create --slug S [--name N]            team list
  team show --team T                         team add-member --team T --user U
  team remove-member --team T --user U
  user create --handle H [--name N]          user list
  user show --user U
  token issue --user U --name N [--expires-at ISO]
  token list --user U                        token revoke --id TOKEN_ID
  project create --slug S --team T [settings]
  project update --project P [--team T] [settings]
  project show --project P                   project list
  project delete --project P                 (a Temporal workflow: stops tasks, then deletes)
  project add-member --project P --user U    project remove-member --project P --user U
  key create --project P --name N            key list --project P
  key revoke --project P --id KEY_ID
  upstream add --project P --alias A --url URL [--enabled on|off] [hosting] [auth]
  upstream update --project P --alias A [--url URL] [--enabled on|off] [hosting] [auth]
  upstream list --project P                  upstream remove --project P --alias A
  authorization grant --project P --upstream A --user U <credential> [--expires-at ISO]
  authorization revoke --project P --upstream A --user U
  authorization list --project P
  audit [--project P] [--limit N] [--before ID]
${APPROVAL_USAGE}  bootstrap --file F
  retention run --kind payloads|metadata     (needs Temporal: temporal.address)

  settings:   --auth-mode required|anonymous  --tool-profile tasks|standard  --tasks on|off
              --namespacing on|off  --cache JSON  --limits JSON
  auth:       --auth none|project|per_user  [--header NAME]  [<credential>]
              per_user connected with OAuth: --oauth on|off  [--client-id ID]  [<credential>: its secret]
              per_user by token exchange: --token-exchange {"issuer","clientId","audience"?,"scope"?}|off
  hosting:    --hosting {"tools","promoteAfterMs"?,"repeatable"?,"maxConcurrent"?}|off  (replaces; off: none)
  credential: --credential-env VAR | --credential-file FILE | --credential VALUE (visible in ps)
`;

export { UsageError };

/** Every flag the usage text names: the one list the parser accepts. */
const KNOWN_FLAGS = [...new Set([...USAGE.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1] as string))].filter(
  (name) => name !== 'flag',
);

function settings(flags: Flags): ProjectPatch {
  const authMode = flags.get('auth-mode');
  const toolProfile = flags.get('tool-profile');
  const tasks = onOff(flags, 'tasks');
  const namespacing = onOff(flags, 'namespacing');
  const cache = json(flags, 'cache');
  const limits = json(flags, 'limits');
  return {
    ...(flags.has('team') && { team: need(flags, 'team') }),
    ...(authMode !== undefined && { authMode: authMode as 'required' }),
    ...(toolProfile !== undefined && { toolProfile: toolProfile as 'tasks' }),
    ...(tasks !== undefined && { features: { tasks } }),
    ...(namespacing !== undefined && { namespacing }),
    ...(cache !== undefined && { cache }),
    ...(limits !== undefined && { limits }),
  };
}

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
  const [noun, verb, ...rest] = args;
  if (noun === undefined || noun === 'help' || noun === '--help') throw new UsageError('');
  if ((APPROVAL_NOUNS as readonly string[]).includes(noun))
    return runApprovalCommand(cp, approvals, noun, verb, rest, KNOWN_FLAGS);
  const admin: Principal = { kind: 'admin', via: 'cli' };
  // `audit` and `bootstrap` have no verb.
  const flags = parseFlags(noun === 'audit' || noun === 'bootstrap' ? args.slice(1) : rest, KNOWN_FLAGS);
  const cmd = noun === 'audit' || noun === 'bootstrap' ? noun : `${noun} ${verb ?? ''}`;
  switch (cmd) {
    case 'team create':
      return cp.createTeam(admin, {
        slug: need(flags, 'slug'),
        name: flags.get('name') ?? need(flags, 'slug'),
      });
    case 'team list':
      return cp.listTeams(admin);
    case 'team show':
      return cp.getTeam(admin, need(flags, 'team'));
    case 'team add-member':
      return (await cp.addTeamMember(admin, need(flags, 'team'), need(flags, 'user'))).record;
    case 'team remove-member':
      await cp.removeTeamMember(admin, need(flags, 'team'), need(flags, 'user'));
      return { removed: true };

    case 'user create':
      return cp.createUser(admin, {
        handle: need(flags, 'handle'),
        name: flags.get('name') ?? need(flags, 'handle'),
      });
    case 'user list':
      return cp.listUsers(admin);
    case 'user show':
      return cp.getUser(admin, need(flags, 'user'));

    case 'token issue': {
      const expiresAt = flags.get('expires-at');
      const { token, record } = await cp.issueUserToken(admin, need(flags, 'user'), {
        name: need(flags, 'name'),
        ...(expiresAt !== undefined && { expiresAt }),
      });
      return { ...record, token };
    }
    case 'token list':
      return cp.listUserTokens(admin, need(flags, 'user'));
    case 'token revoke':
      return cp.revokeToken(admin, need(flags, 'id'));

    case 'project create':
      return cp.createProject(admin, {
        ...settings(flags),
        slug: need(flags, 'slug'),
        team: need(flags, 'team'),
      } as NewProject);
    case 'project update':
      return (await cp.updateProject(admin, need(flags, 'project'), settings(flags))).record;
    case 'project show':
      return cp.getProject(admin, need(flags, 'project'));
    case 'project list':
      return cp.listProjects(admin);
    case 'project delete': {
      if (!temporal) {
        const deleted = await cp.deleteProject(admin, need(flags, 'project'));
        return { deleted: { id: deleted.id, slug: deleted.slug } };
      }
      // The project stops serving at once; the deletion workflow removes the rest.
      const project = await cp.markProjectDeleting(admin, need(flags, 'project'));
      const { workflowId } = await temporal.startProjectDeletion(project.id);
      return { deleting: { id: project.id, slug: project.slug, workflowId } };
    }
    case 'project add-member':
      return (await cp.addProjectMember(admin, need(flags, 'project'), need(flags, 'user'))).record;
    case 'project remove-member':
      await cp.removeProjectMember(admin, need(flags, 'project'), need(flags, 'user'));
      return { removed: true };

    case 'key create': {
      const { key, record } = await cp.createApiKey(admin, need(flags, 'project'), {
        name: need(flags, 'name'),
      });
      return { ...record, key };
    }
    case 'key list':
      return cp.listApiKeys(admin, need(flags, 'project'));
    case 'key revoke':
      return cp.revokeApiKey(admin, need(flags, 'project'), need(flags, 'id'));

    case 'upstream add': {
      const enabled = onOff(flags, 'enabled');
      const auth = authInput(flags, env);
      const hosting = hostingInput(flags);
      return cp.addUpstream(admin, need(flags, 'project'), {
        alias: need(flags, 'alias'),
        url: need(flags, 'url'),
        ...(enabled !== undefined && { enabled }),
        ...(auth !== undefined && { auth }),
        ...(hosting && { hosting }),
      });
    }
    case 'upstream update': {
      const project = need(flags, 'project');
      const alias = need(flags, 'alias');
      const current = (await cp.listUpstreams(admin, project)).find((u) => u.alias === alias);
      const enabled = onOff(flags, 'enabled');
      const url = flags.get('url');
      const auth = authInput(flags, env, current?.auth);
      const hosting = hostingInput(flags);
      const patch: UpstreamPatch = {
        ...(url !== undefined && { url }),
        ...(enabled !== undefined && { enabled }),
        ...(auth !== undefined && { auth }),
        ...(hosting !== undefined && { hosting }),
      };
      return (await cp.updateUpstream(admin, project, alias, patch)).record;
    }
    case 'upstream list':
      return cp.listUpstreams(admin, need(flags, 'project'));
    case 'upstream remove':
      await cp.removeUpstream(admin, need(flags, 'project'), need(flags, 'alias'));
      return { removed: true };

    case 'authorization grant': {
      const secret = credential(flags, env);
      if (secret === undefined) throw new UsageError('a credential is required (--credential-env, ...)');
      const expiresAt = flags.get('expires-at');
      return cp.grantUpstreamAuthorization(admin, need(flags, 'project'), need(flags, 'upstream'), {
        credential: secret,
        user: need(flags, 'user'),
        ...(expiresAt !== undefined && { expiresAt }),
      });
    }
    case 'authorization revoke':
      return cp.revokeUpstreamAuthorization(admin, need(flags, 'project'), need(flags, 'upstream'), {
        user: need(flags, 'user'),
      });
    case 'authorization list':
      return cp.listUpstreamAuthorizations(admin, need(flags, 'project'));

    case 'audit': {
      const limit = flags.get('limit');
      const project = flags.get('project');
      const before = flags.get('before');
      return cp.listAudit(admin, {
        ...(project !== undefined && { project }),
        ...(limit !== undefined && { limit: Number(limit) }),
        ...(before !== undefined && { before }),
      });
    }
    case 'bootstrap':
      return applyBootstrap(cp, loadBootstrapFile(need(flags, 'file')));

    case 'retention run': {
      const kind = need(flags, 'kind');
      if (kind !== 'payloads' && kind !== 'metadata')
        throw new UsageError('--kind must be payloads or metadata');
      if (!temporal) throw new UsageError('retention run needs a Temporal connection');
      return temporal.runRetention(kind);
    }
  }
  throw new UsageError(`Unknown command "${args.join(' ')}"`);
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
