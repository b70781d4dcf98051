/** Gateway task ids: 192 random bits behind a recognisable prefix. */
import { randomBytes } from 'node:crypto';

export const TASK_ID_PREFIX = 'trt_';

export function mintTaskId(): string {
  return TASK_ID_PREFIX + randomBytes(24).toString('base64url');
}
