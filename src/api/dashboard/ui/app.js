// The TaskRouter dashboard: one small ES module, no framework and no third-party code. It talks only to
// the gateway's own JSON API (/v1/session, /v1/projects…) and builds the DOM with textContent, never
// innerHTML, so nothing a task carries can become markup. Routes live in the URL fragment:
//   #/signin · #/ (projects) · #/p/<slug>?group=…&assigned=… (tasks) · #/p/<slug>/t/<ref> (one task)

const GROUPS = [
  ['all', 'All'],
  ['pending', 'Pending'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];
const ASSIGNED = [
  ['all', 'All tasks'],
  ['any', 'Assigned'],
  ['me', 'Assigned to me'],
];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const LIST_REFRESH_MS = 2000;
const DETAIL_REFRESH_MS = 1000;

const state = { user: null, csrf: null, timer: null, renderId: 0, focusAfterRender: null };

// ── DOM helpers ────────────────────────────────────────────────────────────────────────────────────

/** Creates an element; attributes starting with "on" become listeners, children may be strings. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false || child === '') continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function replace(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
}

/** A selector that finds the "same" element again after a redraw (tabs, filter buttons, task links). */
function focusKey(el) {
  if (!el || el === document.body) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  if (el.dataset.group) return `[data-group="${CSS.escape(el.dataset.group)}"]`;
  if (el.dataset.assigned) return `[data-assigned="${CSS.escape(el.dataset.assigned)}"]`;
  if (el.tagName === 'A' && el.getAttribute('href'))
    return `a[href="${CSS.escape(el.getAttribute('href'))}"]`;
  return null;
}

/** Runs a redraw and puts keyboard focus back on the equivalent element, if it had focus before. */
function keepFocus(redraw) {
  const before = document.activeElement;
  const key = focusKey(before);
  redraw();
  if (!before || before === document.body || before.isConnected) return;
  // The focused element was redrawn away: focus its successor, or the page's main region.
  const again = key ? document.querySelector(key) : null;
  (again ?? document.getElementById('main')).focus();
}

function announce(message) {
  const el = document.getElementById('announcer');
  el.textContent = '';
  setTimeout(() => (el.textContent = message), 50);
}

function formatTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function ago(iso) {
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

function statusBadge(status) {
  return h('span', { class: `badge status-${status}` }, status.replace('_', ' '));
}

function personName(p) {
  return p ? p.handle : '—';
}

function callerText(caller) {
  if (caller.kind === 'user') return caller.user ? caller.user.handle : 'user';
  if (caller.kind === 'api_key') return 'API key';
  return caller.kind;
}

function json(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

// ── API ────────────────────────────────────────────────────────────────────────────────────────────

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    if (res.status === 401 && path !== '/v1/session') {
      state.user = null;
      go('#/signin');
    }
    throw new ApiError(res.status, data?.error?.code ?? 'error', data?.error?.message ?? res.statusText);
  }
  return data;
}

// ── routing ────────────────────────────────────────────────────────────────────────────────────────

function go(hash) {
  if (location.hash === hash) void render();
  else location.hash = hash;
}

function parseRoute() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, search = ''] = raw.split('?');
  let parts;
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: 'projects' }; // a mangled address lands on the project list
  }
  const query = new URLSearchParams(search);
  if (parts[0] === 'signin') return { name: 'signin' };
  if (parts[0] === 'p' && parts[1] && parts[2] === 't' && parts[3]) {
    return { name: 'task', slug: parts[1], ref: parts[3] };
  }
  if (parts[0] === 'p' && parts[1]) {
    return {
      name: 'tasks',
      slug: parts[1],
      group: query.get('group') ?? 'all',
      assigned: query.get('assigned') ?? 'all',
    };
  }
  return { name: 'projects' };
}

function tasksHash(slug, group, assigned) {
  const q = new URLSearchParams();
  if (group !== 'all') q.set('group', group);
  if (assigned !== 'all') q.set('assigned', assigned);
  const s = q.toString();
  return `#/p/${encodeURIComponent(slug)}${s ? `?${s}` : ''}`;
}

function stopRefresh() {
  if (state.timer !== null) clearTimeout(state.timer);
  state.timer = null;
}

/** Re-runs `tick` every `ms` while this render is current and the page is visible. */
function keepRefreshing(renderId, ms, tick) {
  const loop = async () => {
    if (renderId !== state.renderId) return;
    if (document.visibilityState === 'visible') {
      try {
        await tick();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
      }
    }
    if (renderId === state.renderId) state.timer = setTimeout(loop, ms);
  };
  state.timer = setTimeout(loop, ms);
}

async function render() {
  stopRefresh();
  const renderId = ++state.renderId;
  const route = parseRoute();
  const main = document.getElementById('main');
  if (route.name !== 'signin' && !state.user) {
    try {
      const session = await api('GET', '/v1/session');
      state.user = session.user;
      state.csrf = session.csrfToken ?? null;
    } catch {
      if (renderId === state.renderId) go('#/signin');
      return;
    }
  }
  renderWho();
  try {
    if (route.name === 'signin') renderSignIn(main);
    else if (route.name === 'projects') await renderProjects(main, renderId);
    else if (route.name === 'tasks') await renderTasks(main, route, renderId);
    else if (route.name === 'task') await renderTask(main, route, renderId);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
    replace(main, h('div', { class: 'notice error', role: 'alert' }, err.message));
  }
  // Navigation started from a control (a tab, a filter button) keeps the keyboard there.
  const focus = state.focusAfterRender;
  state.focusAfterRender = null;
  if (focus && renderId === state.renderId) document.querySelector(focus)?.focus();
}

/** Navigates, then focuses `selector` in the new view. */
function goAndFocus(hash, selector) {
  state.focusAfterRender = selector;
  go(hash);
}

function renderWho() {
  const who = document.getElementById('who');
  if (!state.user) return replace(who);
  replace(
    who,
    h('span', { class: 'muted' }, 'Signed in as '),
    h('strong', { 'data-testid': 'whoami' }, state.user.handle),
    h(
      'button',
      {
        type: 'button',
        class: 'link-button',
        onclick: async () => {
          await api('DELETE', '/v1/session').catch(() => undefined);
          state.user = null;
          state.csrf = null;
          go('#/signin');
        },
      },
      'Sign out',
    ),
  );
}

function setCrumbs(...items) {
  const crumbs = document.getElementById('crumbs');
  replace(
    crumbs,
    h(
      'ol',
      {},
      items.map((item, i) =>
        h(
          'li',
          {},
          i === items.length - 1
            ? h('span', { 'aria-current': 'page' }, item.label)
            : h('a', { href: item.href }, item.label),
        ),
      ),
    ),
  );
}

// ── sign in ────────────────────────────────────────────────────────────────────────────────────────

function renderSignIn(main) {
  setCrumbs();
  document.title = 'Sign in · TaskRouter';
  const error = h('p', { class: 'field-error', role: 'alert' });
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'trp_…',
  });
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        try {
          const session = await api('POST', '/v1/session', { token: input.value.trim() });
          state.user = session.user;
          state.csrf = session.csrfToken;
          input.value = '';
          go('#/');
        } catch (err) {
          error.textContent = err.message;
          input.focus();
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'Use your personal access token (trp_…). It is exchanged for a browser session; the token is not stored by the browser.',
    ),
    h('label', { for: 'token' }, 'User token'),
    input,
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  replace(main, form);
  input.focus();
}

// ── projects ───────────────────────────────────────────────────────────────────────────────────────

async function renderProjects(main, renderId) {
  setCrumbs({ label: 'Projects' });
  document.title = 'Projects · TaskRouter';
  const { projects } = await api('GET', '/v1/projects');
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

// ── tasks view ─────────────────────────────────────────────────────────────────────────────────────

async function renderTasks(main, route, renderId) {
  const { slug, group, assigned } = route;
  setCrumbs({ label: 'Projects', href: '#/' }, { label: slug });
  document.title = `${slug} tasks · TaskRouter`;
  const params = () => {
    const q = new URLSearchParams({ group, assigned });
    return `/v1/projects/${encodeURIComponent(slug)}/tasks?${q}`;
  };
  let data = await api('GET', params());
  if (renderId !== state.renderId) return;

  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Task groups' });
  // Buttons, not a select: a select fires "change" on every arrow key, which would navigate.
  const filter = h(
    'div',
    { class: 'segmented', role: 'group', 'aria-label': 'Assigned filter' },
    ASSIGNED.map(([value, label]) =>
      h(
        'button',
        {
          type: 'button',
          'data-assigned': value,
          'aria-pressed': value === assigned ? 'true' : 'false',
          onclick: () => goAndFocus(tasksHash(slug, group, value), `[data-assigned="${value}"]`),
        },
        label,
      ),
    ),
  );
  const panel = h('div', { id: 'task-panel', role: 'tabpanel', 'aria-labelledby': `tab-${group}` });
  const more = h('div', { class: 'more' });

  const drawTabs = () =>
    replace(
      tabs,
      GROUPS.map(([value, label]) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${value}`,
            'data-group': value,
            'aria-selected': value === group ? 'true' : 'false',
            'aria-controls': 'task-panel',
            tabindex: value === group ? '0' : '-1',
            onclick: () => goAndFocus(tasksHash(slug, value, assigned), `[data-group="${value}"]`),
            onkeydown: (event) => {
              const i = GROUPS.findIndex(([g]) => g === value);
              const next = event.key === 'ArrowRight' ? i + 1 : event.key === 'ArrowLeft' ? i - 1 : null;
              if (next === null) return;
              event.preventDefault();
              const target = GROUPS[(next + GROUPS.length) % GROUPS.length][0];
              goAndFocus(tasksHash(slug, target, assigned), `[data-group="${target}"]`);
            },
          },
          label,
          ' ',
          h('span', { class: 'count', 'data-count': value }, String(data.counts[value])),
        ),
      ),
    );

  let rows = data.tasks;
  const drawRows = () => {
    if (rows.length === 0) {
      return replace(panel, h('p', { class: 'empty muted' }, 'No tasks here.'));
    }
    replace(
      panel,
      h(
        'table',
        { class: 'tasks' },
        h('caption', { class: 'visually-hidden' }, `${GROUPS.find(([g]) => g === group)[1]} tasks`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Tool', 'Status', 'Message', 'Caller', 'Assignee', 'Created'].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          rows.map((t) =>
            h(
              'tr',
              { 'data-ref': t.ref, 'data-status': t.status },
              h(
                'td',
                { 'data-label': 'Tool' },
                h('a', { href: `#/p/${encodeURIComponent(slug)}/t/${t.ref}` }, t.tool),
                h('span', { class: 'muted small' }, ` ${t.upstream}`),
              ),
              h('td', { 'data-label': 'Status' }, statusBadge(t.status)),
              h('td', { 'data-label': 'Message', class: 'message' }, t.statusMessage ?? ''),
              h('td', { 'data-label': 'Caller' }, callerText(t.caller)),
              h('td', { 'data-label': 'Assignee', class: 'assignee' }, personName(t.assignee)),
              h(
                'td',
                { 'data-label': 'Created' },
                h('time', { datetime: t.createdAt, title: formatTime(t.createdAt) }, ago(t.createdAt)),
              ),
            ),
          ),
        ),
      ),
    );
  };
  let nextCursor = data.nextCursor;
  let pagesLoaded = 1;
  const drawMore = () =>
    replace(
      more,
      nextCursor &&
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              const page = await api('GET', `${params()}&cursor=${encodeURIComponent(nextCursor)}`);
              const firstNew = page.tasks[0]?.ref;
              rows = rows.concat(page.tasks);
              nextCursor = page.nextCursor;
              pagesLoaded += 1;
              drawRows();
              drawMore();
              // Keyboard users continue at the first task of the new page.
              if (firstNew) panel.querySelector(`tr[data-ref="${firstNew}"] a`)?.focus();
            },
          },
          'Load more',
        ),
    );

  drawTabs();
  drawRows();
  drawMore();
  replace(
    main,
    h('div', { class: 'heading-row' }, h('h1', {}, 'Tasks'), h('div', { class: 'filter' }, filter)),
    tabs,
    panel,
    more,
  );

  // Live refresh: counts and the first page, redrawn only when something changed (keeps focus put).
  let seen = JSON.stringify(data);
  keepRefreshing(renderId, LIST_REFRESH_MS, async () => {
    const fresh = await api('GET', params());
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    seen = text;
    data = fresh;
    keepFocus(() => {
      drawTabs();
      // Once further pages are loaded, only the counts refresh (replacing the rows would drop them).
      if (pagesLoaded === 1) {
        rows = fresh.tasks;
        nextCursor = fresh.nextCursor;
        drawRows();
        drawMore();
      }
    });
  });
}

// ── one task ───────────────────────────────────────────────────────────────────────────────────────

async function renderTask(main, route, renderId) {
  const { slug, ref } = route;
  const base = `/v1/projects/${encodeURIComponent(slug)}/tasks/${encodeURIComponent(ref)}`;
  let data = await api('GET', base);
  const project = await api('GET', `/v1/projects/${encodeURIComponent(slug)}`);
  if (renderId !== state.renderId) return;
  setCrumbs(
    { label: 'Projects', href: '#/' },
    { label: slug, href: tasksHash(slug, 'all', 'all') },
    { label: data.task.tool },
  );
  document.title = `${data.task.tool} · ${slug} · TaskRouter`;

  const header = h('div', { class: 'heading-row' });
  const meta = h('section', { class: 'card', 'aria-labelledby': 'meta-h' });
  const controls = h('section', { class: 'card controls', 'aria-labelledby': 'controls-h' });
  const input = h('section', { class: 'card input-section', 'aria-labelledby': 'input-h' });
  const payload = h('section', { class: 'card', 'aria-labelledby': 'payload-h' });
  const timeline = h('section', { class: 'card', 'aria-labelledby': 'timeline-h' });

  const drawHeader = () =>
    replace(
      header,
      h('h1', {}, data.task.tool),
      h('span', { 'data-testid': 'task-status' }, statusBadge(data.task.status)),
    );

  const drawMeta = () => {
    const t = data.task;
    const rows = [
      ['Tool', t.tool],
      ['Upstream', t.upstream],
      ['Status', t.status.replace('_', ' ')],
      ['Status message', t.statusMessage ?? '—'],
      ['Started by', callerText(t.caller)],
      ['Caller kind', t.caller.kind === 'api_key' ? 'API key' : t.caller.kind],
      ['Assignee', personName(t.assignee)],
      ['Created', formatTime(t.createdAt)],
      ['Last updated', formatTime(t.lastUpdatedAt)],
    ];
    replace(
      meta,
      h('h2', { id: 'meta-h' }, 'Details'),
      h(
        'dl',
        { class: 'meta' },
        rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, v)]),
      ),
      data.workflow &&
        h(
          'p',
          { class: 'workflow' },
          'Workflow: ',
          data.workflow.url
            ? h(
                'a',
                {
                  href: data.workflow.url,
                  target: '_blank',
                  rel: 'noopener noreferrer',
                  'data-testid': 'temporal-link',
                },
                `${data.workflow.id} in the Temporal Web UI`,
              )
            : h('code', {}, data.workflow.id),
        ),
    );
  };

  const drawControls = () => {
    const c = data.controls;
    const parts = [];
    if (c.assign) parts.push(assignmentControl(base, project.people, data.task.assignee, refresh));
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
              event.target.disabled = true;
              try {
                await api('POST', `${base}/cancel`);
                announce('Cancellation requested');
                await refresh();
              } catch (err) {
                showError(controls, err);
                event.target.disabled = false;
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
  };

  // One form per open input request, kept across refreshes while its request is unchanged, so an
  // answered question disappears without wiping what is typed into the others.
  const forms = new Map(); // key → { request: JSON text, form }
  const drawInput = () => {
    const requests = data.controls.answer && data.payload.visible ? data.payload.inputRequests : undefined;
    const open = Object.entries(requests ?? {});
    for (const [k, entry] of forms) {
      if (!open.some(([key, r]) => key === k && JSON.stringify(r) === entry.request)) {
        entry.form.remove();
        forms.delete(k);
      }
    }
    if (open.length === 0) {
      input.hidden = true;
      return replace(input);
    }
    if (!input.querySelector('#input-h')) replace(input, h('h2', { id: 'input-h' }, 'Input requested'));
    input.hidden = false;
    for (const [k, r] of open) {
      if (forms.has(k)) continue; // left in place: moving a node would take the keyboard focus away
      const form = elicitationForm(base, k, r, refresh);
      forms.set(k, { request: JSON.stringify(r), form });
      input.append(form);
    }
  };

  const drawPayload = () => {
    const p = data.payload;
    if (!p.visible) {
      return replace(
        payload,
        h('h2', { id: 'payload-h' }, 'Inputs and results'),
        h('p', { class: 'notice', 'data-testid': 'payload-hidden', 'data-reason': p.reason }, p.message),
      );
    }
    replace(
      payload,
      h('h2', { id: 'payload-h' }, 'Inputs and results'),
      p.arguments !== undefined && [h('h3', {}, 'Arguments'), json(p.arguments)],
      p.result && [h('h3', {}, 'Result'), resultView(p.result)],
      p.error && [
        h('h3', {}, 'Error'),
        h('p', { class: 'error-text' }, `${p.error.code}: ${p.error.message}`),
      ],
      p.arguments === undefined && !p.result && !p.error && h('p', { class: 'muted' }, 'Nothing yet.'),
    );
  };

  const drawTimeline = () =>
    replace(
      timeline,
      h('h2', { id: 'timeline-h' }, 'Timeline'),
      h(
        'ol',
        { class: 'timeline', 'data-testid': 'timeline' },
        data.timeline.map((e) =>
          h(
            'li',
            { 'data-kind': e.kind },
            h('time', { datetime: e.at }, formatTime(e.at)),
            e.kind === 'assignment'
              ? h(
                  'span',
                  {},
                  e.assignee ? `Assigned to ${e.assignee.handle}` : 'Unassigned',
                  e.by ? ` by ${e.by.handle}` : '',
                )
              : h('span', {}, statusBadge(e.status), e.statusMessage ? ` ${e.statusMessage}` : ''),
          ),
        ),
      ),
    );

  // Each section is redrawn only when its own data changed, so a refresh never resets a control the
  // user is working with (a half-chosen assignee, a focused button).
  const drawn = {};
  const section = (name, key, drawSection) => {
    const k = JSON.stringify(key);
    if (drawn[name] === k) return;
    drawn[name] = k;
    keepFocus(drawSection);
  };
  const draw = () => {
    section('header', [data.task.tool, data.task.status], drawHeader);
    section('meta', [data.task, data.workflow], drawMeta);
    section('controls', [data.controls.assign, data.controls.cancel, data.task.assignee], drawControls);
    drawInput();
    section('payload', data.payload, drawPayload);
    section('timeline', data.timeline, drawTimeline);
  };
  let seen = JSON.stringify(data);
  async function refresh() {
    const fresh = await api('GET', base);
    if (renderId !== state.renderId) return;
    const text = JSON.stringify(fresh);
    if (text === seen) return;
    if (fresh.task.status !== data.task.status)
      announce(`Task is now ${fresh.task.status.replace('_', ' ')}`);
    seen = text;
    data = fresh;
    draw();
  }
  draw();
  replace(
    main,
    header,
    h('div', { class: 'grid' }, h('div', {}, input, controls, payload), h('div', {}, meta, timeline)),
  );
  // Live refresh: every tick while the task can still change; a finished task changes only by
  // assignment, so every fifth tick is enough then.
  let ticks = 0;
  keepRefreshing(renderId, DETAIL_REFRESH_MS, async () => {
    ticks += 1;
    if (TERMINAL.has(data.task.status) && ticks % 5 !== 0) return;
    await refresh();
  });
}

function showError(container, err) {
  container.querySelector('.field-error')?.remove();
  container.append(h('p', { class: 'field-error', role: 'alert' }, err.message));
}

function assignmentControl(base, people, current, refresh) {
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
          const res = await api('PUT', `${base}/assignee`, {
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

function resultView(result) {
  const content = Array.isArray(result.content) ? result.content : [];
  return [
    result.isError && h('p', { class: 'error-text' }, 'The tool reported an error.'),
    content.map((c) => (c.type === 'text' ? h('p', { class: 'result-text' }, c.text) : json(c))),
    result.structuredContent !== undefined && json(result.structuredContent),
  ];
}

// ── elicitation forms, rendered from the requested schema ──────────────────────────────────────────

function elicitationForm(base, key, request, refresh) {
  const params = request.params ?? {};
  const schema = isObject(params.requestedSchema) ? params.requestedSchema : { type: 'object' };
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = schemaProperties(schema).map(([name, prop]) =>
    fieldFor(key, name, prop, required.has(name)),
  );
  const error = h('p', { class: 'field-error', role: 'alert' });
  const send = async (action, form) => {
    error.textContent = '';
    const content = action === 'accept' ? readFields(form, schema) : undefined;
    try {
      await api('POST', `${base}/input`, {
        inputResponses: { [key]: { action, ...(content && { content }) } },
      });
      announce('Answer sent');
      for (const b of form.querySelectorAll('button')) b.disabled = true;
      await refresh();
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const form = h(
    'form',
    {
      class: 'elicitation',
      'data-input-key': key,
      onsubmit: (event) => {
        event.preventDefault();
        void send('accept', event.target);
      },
    },
    h('p', { class: 'prompt' }, params.message ?? 'The tool asks for input.'),
    fields,
    error,
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit', class: 'primary' }, 'Submit'),
      h('button', { type: 'button', onclick: (event) => void send('decline', event.target.form) }, 'Decline'),
    ),
  );
  return form;
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema's properties that are objects (anything else cannot be rendered and is skipped). */
function schemaProperties(schema) {
  return isObject(schema.properties) ? Object.entries(schema.properties).filter(([, p]) => isObject(p)) : [];
}

function fieldId(key, name) {
  return `f-${key}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

function fieldFor(key, name, prop, required) {
  const id = fieldId(key, name);
  const label = prop.title ?? name;
  const description = prop.description && h('span', { class: 'hint', id: `${id}-hint` }, prop.description);
  const common = { id, name, required, 'aria-describedby': prop.description ? `${id}-hint` : undefined };
  const options = enumOptions(prop);
  if (prop.type === 'boolean') {
    return h(
      'div',
      { class: 'field checkbox' },
      h('input', {
        ...common,
        type: 'checkbox',
        required: false,
        checked: prop.default === true,
        'data-type': 'boolean',
      }),
      h('label', { for: id }, label),
      description,
    );
  }
  if (options) {
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      h(
        'select',
        { ...common, 'data-type': 'enum' },
        !required && h('option', { value: '' }, '—'),
        options.map(([value, text]) => h('option', { value, selected: prop.default === value }, text)),
      ),
      description,
    );
  }
  if (prop.type === 'array' && prop.items) {
    const itemOptions = enumOptions(prop.items) ?? [];
    return h(
      'fieldset',
      { class: 'field', 'data-type': 'multi', 'data-name': name },
      h('legend', {}, label),
      itemOptions.map(([value, text], i) =>
        h(
          'div',
          { class: 'checkbox' },
          h('input', { type: 'checkbox', id: `${id}-${i}`, name, value }),
          h('label', { for: `${id}-${i}` }, text),
        ),
      ),
      description,
    );
  }
  const numeric = prop.type === 'number' || prop.type === 'integer';
  const type = numeric
    ? 'number'
    : ({ email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[prop.format] ?? 'text');
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label, required ? ' *' : ''),
    h('input', {
      ...common,
      type,
      'data-type': numeric ? prop.type : 'string',
      value: prop.default,
      min: prop.minimum,
      max: prop.maximum,
      step: prop.type === 'integer' ? 1 : numeric ? 'any' : undefined,
      minlength: prop.minLength,
      maxlength: prop.maxLength,
    }),
    description,
  );
}

function enumOptions(prop) {
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((v, i) => [String(v), String(names[i] ?? v)]);
  }
  const choices = prop.oneOf ?? prop.anyOf;
  if (Array.isArray(choices) && choices.every((c) => c && 'const' in c)) {
    return choices.map((c) => [String(c.const), String(c.title ?? c.const)]);
  }
  return undefined;
}

function readFields(form, schema) {
  const content = {};
  for (const [name, prop] of schemaProperties(schema)) {
    const multi = form.querySelector(`fieldset[data-name="${CSS.escape(name)}"]`);
    if (multi) {
      content[name] = [...multi.querySelectorAll('input:checked')].map((i) => i.value);
      continue;
    }
    const el = form.elements.namedItem(name);
    if (!el) continue;
    const type = el.dataset.type;
    if (type === 'boolean') content[name] = el.checked;
    else if (el.value === '') continue;
    else if (type === 'number' || type === 'integer') content[name] = Number(el.value);
    else if (type === 'enum' && (prop.type === 'number' || prop.type === 'integer'))
      content[name] = Number(el.value);
    // datetime-local gives local time without a zone; JSON Schema's date-time wants RFC 3339.
    else if (prop.format === 'date-time') content[name] = new Date(el.value).toISOString();
    else content[name] = el.value;
  }
  return content;
}

// The skip link must not go through the fragment router.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  document.getElementById('main').focus();
});
window.addEventListener('hashchange', () => void render());
void render();
