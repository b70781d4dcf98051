/**
 * The table of admin operations (issue 25): every operation of the admin API and the CLI, once. The
 * API's routes (./http.ts), the CLI's commands and its usage text (src/main/admin-cli-commands.ts) are
 * derived from it; adding an operation is one entry in its noun's module (plus its tests). The order is
 * the routes' order (a 405 lists the allowed methods in it) and the usage text's.
 */
import { APPROVAL_OPERATIONS } from './approvals';
import { AUDIT_OPERATIONS } from './audit';
import { AUTHORIZATION_OPERATIONS } from './authorizations';
import type { AdminOperation } from './define';
import { KEY_OPERATIONS } from './keys';
import { MAINTENANCE_OPERATIONS } from './maintenance';
import { PROJECT_OPERATIONS } from './projects';
import { TEAM_OPERATIONS } from './teams';
import { TOKEN_OPERATIONS } from './tokens';
import { UPSTREAM_OPERATIONS } from './upstreams';
import { USER_OPERATIONS } from './users';

export type { AdminOperation, OperationContext, OperationDeps } from './define';

export const ADMIN_OPERATIONS: readonly AdminOperation[] = [
  ...TEAM_OPERATIONS,
  ...USER_OPERATIONS,
  ...TOKEN_OPERATIONS,
  ...PROJECT_OPERATIONS,
  ...KEY_OPERATIONS,
  ...UPSTREAM_OPERATIONS,
  ...AUTHORIZATION_OPERATIONS,
  ...AUDIT_OPERATIONS,
  ...APPROVAL_OPERATIONS,
  ...MAINTENANCE_OPERATIONS,
];
