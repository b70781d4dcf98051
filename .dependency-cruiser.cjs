// @ts-check
/**
 * The house rules for imports inside src/ (docs/architecture.md, "Layers"): no circles, and every folder
 * imports only the floors below it. `npm run lint` runs this check (`npm run lint:deps` alone).
 *
 * Floors, lowest first:
 *   protocol, config → store, upstream → workflows → activities → temporal → gateway → api → main
 * with telemetry (metrics, readiness) usable from every floor but workflows, and beside them tooling (development launchers), which only entry points for local runs, tests,
 * benchmarks and scripts may use.
 */

/** A folder of src/ as a path pattern. */
const folder = (...names) => `^src/(${names.join('|')})/`;

/** `from` may import nothing in src/ but its own folder and `allowed`. */
function floor(name, allowed, comment) {
  const all = [
    'protocol',
    'config',
    'store',
    'upstream',
    'workflows',
    'activities',
    'temporal',
    'gateway',
    'api',
    'main',
    'tooling',
    'telemetry',
  ];
  // Telemetry (metrics, tracing, readiness) is usable from every floor but workflows (replayed code
  // must not count or trace twice) and the two vocabularies below it.
  const withTelemetry = ['protocol', 'config', 'workflows', 'telemetry'].includes(name) ? [] : ['telemetry'];
  const forbidden = all.filter((f) => f !== name && !allowed.includes(f) && !withTelemetry.includes(f));
  return {
    name: `layer-${name}`,
    comment,
    severity: 'error',
    from: { path: folder(name) },
    to: { path: folder(...forbidden) },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import circles make load order matter and hide which module owns what.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    floor('protocol', [], 'The wire vocabulary: no I/O and nothing of ours.'),
    floor('config', ['protocol'], 'Configuration schema: protocol constants at most.'),
    floor('telemetry', [], 'Metrics registry and readiness checks: nothing of ours.'),
    floor('store', ['protocol', 'config'], 'Persistence knows no transport, engine or upstream.'),
    floor('upstream', ['protocol', 'config'], 'The MCP client toward upstreams is plain I/O.'),
    floor(
      'workflows',
      ['protocol', 'store', 'activities'],
      'Deterministic workflow code (store and activities as types only, see the next rule).',
    ),
    {
      name: 'workflows-types-only',
      comment: 'Workflow code runs in the sandbox: store and activity modules may be imported as types only.',
      severity: 'error',
      from: { path: folder('workflows') },
      to: { path: folder('store', 'activities'), dependencyTypesNot: ['type-only'] },
    },
    floor(
      'activities',
      ['protocol', 'config', 'store', 'upstream', 'workflows'],
      'Activities do the I/O workflows ask for.',
    ),
    floor(
      'temporal',
      ['protocol', 'config', 'store', 'upstream', 'workflows', 'activities'],
      'Temporal wiring: client, worker, codec, schedules.',
    ),
    floor(
      'gateway',
      ['protocol', 'config', 'store', 'upstream', 'workflows', 'temporal'],
      'The decisions; the task engine is reached through its type only (next rule).',
    ),
    {
      name: 'gateway-engine-types-only',
      comment: 'The gateway talks to Temporal through the TaskEngine port, injected by main.',
      severity: 'error',
      from: { path: folder('gateway') },
      to: { path: folder('temporal'), dependencyTypesNot: ['type-only'] },
    },
    floor(
      'api',
      ['protocol', 'config', 'store', 'upstream', 'workflows', 'gateway'],
      'HTTP adapters over the gateway and the store.',
    ),
    floor('tooling', ['protocol', 'config'], 'Development launchers stand apart from the product.'),
    {
      name: 'tooling-not-in-production',
      comment:
        'Development launchers (Temporal dev server, PostgreSQL, the CLI installer) are for npm start, tests, benchmarks and scripts; production code never imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/tooling/', '^src/main/start\\.ts$'] },
      to: { path: folder('tooling') },
    },
    {
      name: 'dashboard-ui-types-only',
      comment:
        "The dashboard's browser code is compiled on its own and served as it is: from outside its folder it takes the view shapes (api/dashboard/view-types.ts), as types only.",
      severity: 'error',
      from: { path: '^src/api/dashboard/ui/' },
      to: { pathNot: ['^src/api/dashboard/ui/', '^src/api/dashboard/view-types\\.ts$'] },
    },
    {
      name: 'dashboard-ui-view-types-as-types',
      comment: 'The view shapes module holds types only; the browser code imports it with `import type`.',
      severity: 'error',
      from: { path: '^src/api/dashboard/ui/' },
      to: { path: '^src/api/dashboard/view-types\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'view-types-import-nothing',
      comment: "The view shapes go into the browser code's compilation: they import nothing of the server.",
      severity: 'error',
      from: { path: '^src/api/dashboard/view-types\\.ts$' },
      to: {},
    },
    {
      name: 'nothing-imports-main',
      comment: 'Entry points sit on top; nothing imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/main/' },
      to: { path: folder('main') },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
