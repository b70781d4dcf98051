/**
 * The authorization matrix of task follow-ups, generated and exhaustive (issue "protocol completeness and
 * hostile input", point 4): every task method of every era the gateway serves
 *
 *   2026-07-28:  tasks/get, tasks/update, tasks/cancel, subscriptions/listen (taskIds)
 *   2025-11-25:  tasks/get, tasks/result, tasks/list, tasks/cancel (a session per caller)
 *
 * × every caller the control plane knows (team member, second team member, direct member, API keys, the
 * same user through another project, another team's user and key, an anonymous caller, outsiders without
 * access, the admin token, no token, a bad token) × every owner of a task (team member, direct member, API key, per-user
 * upstream authorization, anonymous). Then the states that take access away, each on a task of its own:
 * an API key revoked, a user token revoked, a direct member removed, an upstream authorization withdrawn
 * (authz-matrix-revoked.test.ts).
 *
 * Expected, cell by cell: the owner reads and controls the task; anyone else who may call their own
 * project gets exactly the answer a task id that never existed gets (so the answer says nothing, not even
 * that the task exists), tasks/list never names another caller's task, a listen acknowledges none of them;
 * callers who may not call the project at all get the project-level refusal (401, 404). Zero reads across
 * tenants is counted: a cell that is not the owner's and returns any task field fails. No refused cell
 * sends anything to the upstream (tasks/update and tasks/cancel counted there).
 */
import type { Subject } from './authz-matrix-gateway';
import { gw, METHODS, S, useMatrixGateway } from './authz-matrix-gateway';
import { judgeForeign, judgeOwn, perform, startLegacyTask, startTask } from './authz-matrix-calls';

useMatrixGateway();

const OWNERS: Subject[] = [S.alice, S.bob, S.key1, S.dave, S.anonymous];
const SUBJECTS: Subject[] = Object.values(S);

test(`${OWNERS.length} owners × 2 tasks (one per era) × ${SUBJECTS.length} callers × ${METHODS.length} task methods of both eras: only the owner reads or controls a task`, async () => {
  const tasks = new Map<Subject, { modern: string; legacy: string }>();
  for (const owner of OWNERS)
    tasks.set(owner, { modern: await startTask(owner), legacy: await startLegacyTask(owner) });
  const failures: string[] = [];
  let cells = 0;
  let foreignCells = 0;
  const controls = () => ({ update: gw.upstream.stats.tasksUpdate, cancel: gw.upstream.stats.tasksCancel });
  const before = controls();
  // Every caller that is not the owner first (nothing they do may change the task)...
  for (const owner of OWNERS) {
    for (const taskId of Object.values(tasks.get(owner) ?? {})) {
      for (const s of SUBJECTS) {
        if (s === owner) continue;
        for (const method of METHODS) {
          cells++;
          foreignCells++;
          const got = await perform(s, method, taskId);
          const wrong = await judgeForeign(s, method, taskId, got);
          if (wrong) failures.push(`${method} by ${s.name} on ${owner.name}'s task: ${wrong}`);
        }
      }
    }
  }
  // ...and none of it reached the upstream.
  expect(controls()).toEqual(before);
  // Then the owners, cancelling last.
  for (const owner of OWNERS) {
    const own = tasks.get(owner) as { modern: string; legacy: string };
    for (const taskId of [own.modern, own.legacy]) {
      for (const method of METHODS) {
        cells++;
        const got = await perform(owner, method, taskId);
        const wrong = judgeOwn(owner, method, taskId, own.legacy, got);
        if (wrong) failures.push(`${method} by the owner ${owner.name}: ${wrong}`);
      }
    }
  }
  console.log(
    `authorization matrix: ${cells} cells (${foreignCells} by callers other than the owner, 0 reads allowed), ${failures.length} failures`,
  );
  expect(failures).toEqual([]);
}, 240_000);
