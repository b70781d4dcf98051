/** An upstream's view as the admin API shows it: `hosting.unmatched` where known, probed on request. */
import { unmatchedRules } from '../../../config/hosting';
import type { UpstreamView } from '../../../store/control-plane';
import { HttpError } from '../../rest-errors';
import type { OperationContext, OperationDeps } from './define';

/** An upstream view with `hosting.unmatched` when this process knows the upstream's tools. */
export function upstreamShown(view: UpstreamView, deps: OperationDeps): UpstreamView {
  const tools = view.hosting && deps.knownTools?.(view.id);
  if (!view.hosting || !tools) return view;
  return { ...view, hosting: { ...view.hosting, unmatched: unmatchedRules(view.hosting, tools) } };
}

/** An upstream's view (by alias or id), as the caller may see it (managers only). */
export async function upstreamView(
  { cp, actor, deps }: OperationContext,
  project: string,
  alias: string,
): Promise<UpstreamView> {
  const found = (await cp.listUpstreams(actor, project)).find((u) => u.alias === alias || u.id === alias);
  if (!found) throw new HttpError('not_found', `No upstream "${alias}" in project "${project}"`);
  return upstreamShown(found, deps);
}

/** Probes the upstream (when this process can) and answers its view with the outcome. */
export async function probed(ctx: OperationContext, project: string, alias: string): Promise<UpstreamView> {
  const { deps } = ctx;
  if (deps.probeUpstream) {
    await deps
      .probeUpstream(project, alias)
      .catch((err: unknown) => deps.logger?.error({ err, upstream: alias }, 'upstream probe failed to run'));
  }
  return upstreamView(ctx, project, alias);
}
