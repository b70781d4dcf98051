// What a viewer may do to a task, as its page offers it: assign it (team members) and cancel it (its own
// user caller). The server decides who may; the page only shows the controls it was told to.
import type { AssigneeView, PersonView, TaskDetailView } from '../../view-types';
import { api, messageOf } from '../api.js';
import type { Child } from '../dom.js';
import { announce, h, replace } from '../dom.js';

export function drawControls(
  controls: HTMLElement,
  data: TaskDetailView,
  base: string,
  people: PersonView[],
  refresh: () => Promise<void>,
): void {
  const c = data.controls;
  const parts: Child[] = [];
  if (c.assign) parts.push(assignmentControl(base, people, data.task.assignee, refresh));
  if (c.cancel) {
    parts.push(
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          id: 'cancel-task',
          'data-testid': 'cancel-task',
          onclick: async (event) => {
            if (!confirm('Cancel this task? The upstream will be asked to stop it.')) return;
            const button = event.target as HTMLButtonElement;
            button.disabled = true;
            try {
              await api('POST', `${base}/cancel`);
              announce('Cancellation requested');
              await refresh();
            } catch (err) {
              showError(controls, err);
              button.disabled = false;
            }
          },
        },
        'Cancel task',
      ),
    );
  }
  if (parts.length === 0) {
    controls.hidden = true;
    return replace(controls);
  }
  controls.hidden = false;
  replace(controls, h('h2', { id: 'controls-h' }, 'Actions'), parts);
}

function showError(container: HTMLElement, err: unknown): void {
  container.querySelector('.field-error')?.remove();
  container.append(h('p', { class: 'field-error', role: 'alert' }, messageOf(err)));
}

function assignmentControl(
  base: string,
  people: PersonView[],
  current: PersonView | null,
  refresh: () => Promise<void>,
): HTMLFormElement {
  const select = h(
    'select',
    { id: 'assignee-select' },
    h('option', { value: '' }, '— nobody —'),
    people.map((p) =>
      h('option', { value: p.handle, selected: current?.handle === p.handle }, `${p.handle} (${p.name})`),
    ),
  );
  const form = h(
    'form',
    {
      class: 'inline-form',
      'data-testid': 'assign-form',
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const res = await api<AssigneeView>('PUT', `${base}/assignee`, {
            assignee: select.value === '' ? null : select.value,
          });
          announce(res.assignee ? `Assigned to ${res.assignee.handle}` : 'Unassigned');
          await refresh();
        } catch (err) {
          showError(form, err);
        }
      },
    },
    h('label', { for: 'assignee-select' }, 'Assignee'),
    select,
    h('button', { type: 'submit', id: 'save-assignee' }, 'Save assignee'),
  );
  return form;
}
