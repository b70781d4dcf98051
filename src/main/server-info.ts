import type { Implementation } from '../protocol';

/** The gateway's identity in `serverInfo` and, toward upstreams, `clientInfo`. */
export const SERVER_INFO: Implementation = { name: 'taskrouter', version: '0.1.0', title: 'TaskRouter' };
