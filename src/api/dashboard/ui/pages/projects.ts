// The project picker: the viewer's projects, each linking to its task list.
import type { ProjectsView } from '../../view-types';
import { api } from '../api.js';
import { h, replace } from '../dom.js';
import { setCrumbs } from '../frame.js';
import { tasksHash } from '../nav.js';
import { state } from '../state.js';

export async function renderProjects(main: HTMLElement, renderId: number): Promise<void> {
  setCrumbs({ label: 'Projects' });
  document.title = 'Projects · TaskRouter';
  const { projects } = await api<ProjectsView>('GET', '/v1/projects');
  if (renderId !== state.renderId) return;
  if (projects.length === 0) {
    return replace(
      main,
      h('h1', {}, 'Projects'),
      h('p', { class: 'muted' }, 'You are not a member of any project yet.'),
    );
  }
  replace(
    main,
    h('h1', {}, 'Projects'),
    h(
      'ul',
      { class: 'project-list' },
      projects.map((p) =>
        h(
          'li',
          {},
          h(
            'a',
            { class: 'card project', href: tasksHash(p.slug, 'all', 'all') },
            h('strong', {}, p.slug),
            h(
              'span',
              { class: 'muted' },
              `team ${p.team} · ${p.role === 'team' ? 'team member' : 'project member'}`,
            ),
          ),
        ),
      ),
    ),
  );
}
