/**
 * Loaded by path (inside the workflow sandbox too): failure messages and stack traces go through the
 * payload codec, because upstream error messages can echo tool arguments.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
