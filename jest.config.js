// @ts-check
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');
/**
 * The whole suite runs once per database (jest `projects`: `sqlite` and `postgres`, shown as the test's
 * display name). TASKROUTER_TEST_DB=sqlite|postgres runs one of them only (`--selectProjects` works too).
 *
 * One in-memory Temporal dev server and one throwaway PostgreSQL cluster are started for the whole run by
 * the global setup (test/global-setup.ts) and shared by all workers and both projects; test files isolate
 * themselves with unique task queues / workflow ids and, for the store, testStoreConfig()
 * (test/helpers/store.ts: a temp SQLite file or a fresh PostgreSQL database).
 */
const DATABASES = ['sqlite', 'postgres'];
const only = process.env.TASKROUTER_TEST_DB;
if (only && !DATABASES.includes(only)) {
  throw new Error(`TASKROUTER_TEST_DB must be one of ${DATABASES.join(', ')} (got ${only})`);
}

/**
 * Pure unit tests: no database, no Temporal server, no browser. `TASKROUTER_TEST_SCOPE=unit` runs only
 * these, without the global setup, which is how .ci/run also runs them on Node 22 and 24 (nothing they
 * load may need a native module built for another Node, such as better-sqlite3).
 */
const UNIT = [
  '/test/protocol/',
  '/test/gateway/',
  '/test/workflows/',
  '/test/activities/',
  '/test/upstream/',
  '/test/config/',
  '/test/examples/',
  '/test/telemetry/',
];

/**
 * Test folders that never open the gateway's database: the units, the Temporal launcher, the conformance
 * run, the `npm start` demo, the serve lifecycle (which bring their own SQLite file) and the Compose file
 * check. Running them a second time under the PostgreSQL project would test nothing new, so that project
 * leaves them out.
 */
const DATABASE_FREE = [
  ...UNIT,
  '/test/tooling/',
  '/test/temporal/',
  '/test/conformance/',
  '/test/deploy/',
  '/test/main/start-demo',
  '/test/main/observability',
  '/test/main/serve-lifecycle',
  // The generated hostile-input run: its gateway process brings its own SQLite file.
  '/test/fuzz/',
];

/** Folders whose tests open the gateway's database: they run once per database. */
const TWO_DATABASES = ['/test/api/', '/test/integration/', '/test/main/', '/test/store/'];

/**
 * Every folder of tests is classified in exactly one list above, or the run stops: a new folder must say
 * whether it is a unit test (no servers, also run on Node 22 and 24), database-free, or run on both
 * databases, instead of silently becoming one of them.
 */
function checkTestFolders() {
  const holdsTests = (dir) =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .some((e) => (e.isDirectory() ? holdsTests(path.join(dir, e.name)) : e.name.endsWith('.test.ts')));
  const lists = [UNIT, DATABASE_FREE.filter((p) => p.endsWith('/') && !UNIT.includes(p)), TWO_DATABASES];
  for (const entry of fs.readdirSync(path.join(__dirname, 'test'), { withFileTypes: true })) {
    if (!entry.isDirectory()) {
      if (entry.name.endsWith('.test.ts')) throw new Error(`test/${entry.name}: put it in a folder of test/`);
      continue;
    }
    if (!holdsTests(path.join(__dirname, 'test', entry.name))) continue;
    const inLists = lists.filter((list) => list.includes(`/test/${entry.name}/`)).length;
    if (inLists !== 1) {
      throw new Error(
        `test/${entry.name}/ holds tests but is in ${inLists} of UNIT, DATABASE_FREE and TWO_DATABASES ` +
          '(jest.config.js): put it in exactly one',
      );
    }
  }
}
checkTestFolders();

/**
 * Packages that ship only as ES modules. The compiled gateway loads them with require() (Node >= 20.19
 * does); jest runs CommonJS and does not, so ts-jest compiles their JavaScript to CommonJS as well, in
 * both scopes. Each is also left out of transformIgnorePatterns, which otherwise skips node_modules.
 */
const ESM_PACKAGES = ['oauth4webapi'];
const esmPackages = {
  transform: {
    '^.+\\.tsx?$': 'ts-jest',
    [`/node_modules/(${ESM_PACKAGES.join('|')})/.+\\.js$`]: [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022', isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
};

const SCOPES = ['all', 'unit'];
const scope = process.env.TASKROUTER_TEST_SCOPE ?? 'all';
if (!SCOPES.includes(scope)) {
  throw new Error(`TASKROUTER_TEST_SCOPE must be one of ${SCOPES.join(', ')} (got ${scope})`);
}

/** The unit scope: one project, no shared servers. */
const unitConfig = {
  testTimeout: 60_000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      preset: 'ts-jest',
      testEnvironment: 'node',
      roots: UNIT.map((dir) => `<rootDir>${dir.slice(0, -1)}`),
      ...esmPackages,
      globals: { TASKROUTER_TEST_DB: 'sqlite' },
    },
  ],
};

/** The whole suite: both databases, shared servers from the global setup. */
const fullConfig = {
  // Integration tests start workers and wait for workflows: jest's 5 s default is far too short.
  testTimeout: 60_000,
  globalSetup: './test/global-setup.ts',
  globalTeardown: './test/global-teardown.ts',
  // Each worker runs Temporal workers (native threads + webpack bundling); two is what a 2-core CI box bears.
  maxWorkers: 2,
  projects: (only ? [only] : DATABASES).map((db) => ({
    displayName: db,
    preset: 'ts-jest',
    testEnvironment: 'node',
    roots: ['<rootDir>/test'],
    ...esmPackages,
    // Read by test/helpers/store.ts (testDatabase()).
    globals: { TASKROUTER_TEST_DB: db },
    ...(db === 'postgres' && { testPathIgnorePatterns: ['/node_modules/', ...DATABASE_FREE] }),
  })),
};

/** @type {import('jest').Config} */
module.exports = scope === 'unit' ? unitConfig : fullConfig;
