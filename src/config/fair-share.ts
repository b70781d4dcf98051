/**
 * Fair shares between tenants (the `fairShare` section): per-project and per-caller bounds on what one
 * tenant may hold of the shared process at once, so a noisy neighbour is refused early and clearly
 * (a retryable `-31013` with a retry delay) instead of starving everyone else.
 */
import { z } from 'zod';

export const FairShareConfigSchema = z.strictObject({});
export type FairShareConfig = z.infer<typeof FairShareConfigSchema>;
