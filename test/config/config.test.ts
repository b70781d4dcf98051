import path from 'node:path';
import { loadConfigFile, parseConfig } from '../../src/config/config';
import { loadBootstrapFile } from '../../src/main/bootstrap';
import { generateKey } from '../../src/store/cipher';

const example = path.join(__dirname, '../../config/taskrouter.example.json');

test('the sample configuration parses once a real key is supplied', () => {
  const input = loadConfigFile(example);
  const config = parseConfig({ ...input, encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } } });
  expect(config.projects[0]?.slug).toBe('demo');
  // Its approval policy (docs/admin.md, "Approvals"), defaults filled in.
  expect(config.projects[0]?.approvals).toMatchObject({
    rules: [{ upstream: 'example', tools: ['confirm_delete'], annotations: [] }],
    approvers: { managers: true, users: [], teams: [] },
    selfApproval: false,
    required: 1,
  });
  expect(config.tasks.minPollIntervalMs).toBeLessThanOrEqual(config.tasks.maxPollIntervalMs);
  expect(Object.isFrozen(config)).toBe(true);
});

test('defaults fill everything but the keys', () => {
  const config = parseConfig({ encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } } });
  expect(config.http.port).toBe(8080);
  expect(config.temporal.taskQueue).toBe('taskrouter-tasks');
  // The SDK's per-promise stack traces cost half the workflow thread (docs/performance.md): asked for only.
  expect(config.temporal.workflowStackTraces).toBe(false);
  expect(config.projects).toEqual([]);
});

test('an invalid configuration is refused with a message naming the field', () => {
  expect(() =>
    parseConfig({
      encryption: { activeKeyId: 'k1', keys: {} },
      projects: [{ slug: 'Bad Slug!', upstreams: [{ alias: 'x', url: 'http://h/mcp' }] }],
    }),
  ).toThrow(/projects.*slug/s);
  expect(() => parseConfig({ encryption: { activeKeyId: 'k1', keys: {} }, surprise: 1 })).toThrow(/surprise/);
});

test('the docker-compose configuration parses once keys come from the environment, and holds no secret', () => {
  const input = loadConfigFile(path.join(__dirname, '../../config/compose.json'));
  const config = parseConfig({ ...input, encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } } });
  // The password comes with TASKROUTER_POSTGRES_URL; the file names the server and the user only.
  expect(config.store.postgresUrl).toBe('postgres://taskrouter@postgres:5432/taskrouter');
  expect(config.temporal.address).toBe('temporal:7233');
  expect(config.encryption.keys).toEqual({ k1: expect.any(String) });
  expect(input.encryption?.keys).toEqual({});
  expect(config.bootstrapFile).toBeUndefined();
});

test('the Temporal Web UI address must be http(s): it becomes a link on the dashboard', () => {
  const keys = { activeKeyId: 'k1', keys: { k1: generateKey() } };
  expect(parseConfig({ encryption: keys, temporal: { uiUrl: 'http://localhost:8233' } }).temporal.uiUrl).toBe(
    'http://localhost:8233',
  );
  expect(() => parseConfig({ encryption: keys, temporal: { uiUrl: 'javascript:alert(1)' } })).toThrow(
    /uiUrl/,
  );
});

test('HTTP timeouts for slow clients have defaults, and a head cannot take longer than its request', () => {
  const encryption = { activeKeyId: 'k1', keys: { k1: generateKey() } };
  const config = parseConfig({ encryption });
  expect(config.http).toMatchObject({
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
  });
  expect(() => parseConfig({ encryption, http: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } })).toThrow(
    /headersTimeoutMs/,
  );
});

test('oauth needs the public origin that names each resource, and refuses weak algorithms', () => {
  const keys = { activeKeyId: 'k1', keys: { k1: generateKey() } };
  const oauth = { issuers: [{ issuer: 'https://id.example.com/realms/main' }] };
  expect(() => parseConfig({ encryption: keys, oauth })).toThrow(/publicBaseUrl/);
  const config = parseConfig({
    encryption: keys,
    oauth,
    http: { publicBaseUrl: 'https://mcp.example.com/' },
  });
  expect(config.http.publicBaseUrl).toBe('https://mcp.example.com');
  expect(config.oauth?.issuers[0]).toMatchObject({
    userClaim: 'sub',
    clockToleranceSec: 30,
    requiredScopes: [],
  });
  for (const alg of ['none', 'HS256']) {
    expect(() =>
      parseConfig({
        encryption: keys,
        http: { publicBaseUrl: 'https://mcp.example.com' },
        oauth: { issuers: [{ issuer: 'https://id.example.com', algorithms: [alg] }] },
      }),
    ).toThrow(/algorithms/);
  }
  expect(() =>
    parseConfig({
      encryption: keys,
      http: { publicBaseUrl: 'https://mcp.example.com' },
      oauth: {
        issuers: [{ issuer: 'https://id.example.com' }],
        dashboard: { issuer: 'https://elsewhere.example.com', clientId: 'x' },
      },
    }),
  ).toThrow(/oauth.dashboard.issuer must be one of oauth.issuers/);
});

test('the sample bootstrap of per-user upstreams parses: connected with OAuth (client chosen by the gateway, or configured), by token exchange, and by hand', () => {
  const doc = loadBootstrapFile(path.join(__dirname, '../../config/oauth-bootstrap.example.json'));
  expect(doc.projects[0]?.upstreams?.map((u) => u.auth)).toEqual([
    { mode: 'per_user', oauth: {} },
    { mode: 'per_user', oauth: { clientId: 'taskrouter-gateway', clientSecret: expect.any(String) } },
    {
      mode: 'per_user',
      tokenExchange: {
        issuer: 'https://sso.example.com/realms/engineering',
        clientId: 'taskrouter-exchange',
        clientSecret: expect.any(String),
        audience: 'crm-api',
      },
    },
    { mode: 'per_user' },
  ]);
});

test('an upstream connected with OAuth needs http.publicBaseUrl (the redirect URI)', () => {
  const upstream = { alias: 't', url: 'https://t.example.com/mcp', auth: { mode: 'per_user', oauth: {} } };
  const input = {
    encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } },
    projects: [{ slug: 'p', upstreams: [upstream] }],
  };
  expect(() => parseConfig(input)).toThrow(/http\.publicBaseUrl/);
  expect(
    parseConfig({ ...input, http: { publicBaseUrl: 'https://mcp.example.com' } }).projects[0]?.upstreams[0]
      ?.auth,
  ).toEqual(upstream.auth);
});

test('the OAuth sample configuration parses once a real key is supplied', () => {
  const input = loadConfigFile(path.join(__dirname, '../../config/oauth.example.json'));
  const config = parseConfig({ ...input, encryption: { activeKeyId: 'k1', keys: { k1: generateKey() } } });
  expect(config.http.publicBaseUrl).toBe('https://mcp.example.com');
  expect(config.oauth?.issuers[0]).toMatchObject({
    issuer: 'https://sso.example.com/realms/engineering',
    groupTeams: { '/platform': 'platform' },
  });
});

test('upstream answer bounds have defaults, and a project may only lower them', () => {
  const keys = { activeKeyId: 'k1', keys: { k1: generateKey() } };
  const config = parseConfig({ encryption: keys });
  expect(config.upstreams).toMatchObject({
    maxResponseBytes: 16 * 1024 * 1024,
    maxSseEventBytes: 1024 * 1024,
    maxAnswerKeys: 5000,
    callDeadlineMs: 120_000,
  });
  const project = (limits: Record<string, unknown>) => ({
    slug: 'p',
    upstreams: [{ alias: 'x', url: 'http://h/mcp' }],
    limits,
  });
  const lower = parseConfig({
    encryption: keys,
    projects: [project({ maxUpstreamResponseBytes: 1024, upstreamCallDeadlineMs: 1000 })],
  });
  expect(lower.projects[0]?.limits).toMatchObject({
    maxUpstreamResponseBytes: 1024,
    upstreamCallDeadlineMs: 1000,
  });
  expect(() =>
    parseConfig({
      encryption: keys,
      upstreams: { maxResponseBytes: 4096, callDeadlineMs: 500 },
      projects: [project({ maxUpstreamResponseBytes: 4097, upstreamCallDeadlineMs: 501 })],
    }),
  ).toThrow(
    /limits\.maxUpstreamResponseBytes \(4097\) is above this instance's maximum of 4096 bytes \(upstreams\.maxResponseBytes\)[\s\S]*projects\[0\]\.limits\.maxUpstreamResponseBytes[\s\S]*upstreamCallDeadlineMs \(501\)/,
  );
});
