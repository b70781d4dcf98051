// Elicitation forms, rendered from the requested schema (strings with formats, numbers and integers
// with bounds, booleans, enums with titles, multi-select arrays) and read back into the answer's content.
// The schema comes from the upstream as it sent it, so every field is read as unknown and checked.
import type { InputRequestView } from '../view-types';
import { api, messageOf } from './api.js';
import { announce, h } from './dom.js';

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function elicitationForm(
  base: string,
  key: string,
  request: InputRequestView,
  refresh: () => Promise<void>,
): HTMLFormElement {
  const params = request.params ?? {};
  const schema: Schema = isObject(params['requestedSchema']) ? params['requestedSchema'] : { type: 'object' };
  const required = new Set<unknown>(Array.isArray(schema['required']) ? schema['required'] : []);
  const fields = schemaProperties(schema).map(([name, prop]) =>
    fieldFor(key, name, prop, required.has(name)),
  );
  const error = h('p', { class: 'field-error', role: 'alert' });
  const send = async (action: 'accept' | 'decline', form: HTMLFormElement): Promise<void> => {
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
      error.textContent = messageOf(err);
    }
  };
  const message = params['message'];
  const form = h(
    'form',
    {
      class: 'elicitation',
      'data-input-key': key,
      onsubmit: (event) => {
        event.preventDefault();
        void send('accept', event.target as HTMLFormElement);
      },
    },
    h('p', { class: 'prompt' }, typeof message === 'string' ? message : 'The tool asks for input.'),
    fields,
    error,
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit', class: 'primary' }, 'Submit'),
      h(
        'button',
        {
          type: 'button',
          onclick: (event) => {
            const owner = (event.target as HTMLButtonElement).form;
            if (owner) void send('decline', owner);
          },
        },
        'Decline',
      ),
    ),
  );
  return form;
}

/** The schema's properties that are objects (anything else cannot be rendered and is skipped). */
function schemaProperties(schema: Schema): Array<[string, Schema]> {
  const properties = schema['properties'];
  if (!isObject(properties)) return [];
  return Object.entries(properties).filter((entry): entry is [string, Schema] => isObject(entry[1]));
}

function fieldId(key: string, name: string): string {
  return `f-${key}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

const INPUT_TYPES: Partial<Record<string, string>> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

function fieldFor(key: string, name: string, prop: Schema, required: boolean): HTMLElement {
  const id = fieldId(key, name);
  const label = (prop['title'] ?? name) as string;
  const hint = prop['description'];
  const description = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint as string) : undefined;
  const common = { id, name, required, 'aria-describedby': hint ? `${id}-hint` : undefined };
  const options = enumOptions(prop);
  if (prop['type'] === 'boolean') {
    return h(
      'div',
      { class: 'field checkbox' },
      h('input', {
        ...common,
        type: 'checkbox',
        required: false,
        checked: prop['default'] === true,
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
        options.map(([value, text]) => h('option', { value, selected: prop['default'] === value }, text)),
      ),
      description,
    );
  }
  const items = prop['items'];
  if (prop['type'] === 'array' && items) {
    const itemOptions = (isObject(items) && enumOptions(items)) || [];
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
  const numeric = prop['type'] === 'number' || prop['type'] === 'integer';
  const type = numeric ? 'number' : (INPUT_TYPES[String(prop['format'])] ?? 'text');
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label, required ? ' *' : ''),
    h('input', {
      ...common,
      type,
      'data-type': numeric ? prop['type'] : 'string',
      value: prop['default'],
      min: prop['minimum'],
      max: prop['maximum'],
      step: prop['type'] === 'integer' ? 1 : numeric ? 'any' : undefined,
      minlength: prop['minLength'],
      maxlength: prop['maxLength'],
    }),
    description,
  );
}

/** An enum's choices as [value, text], from `enum` (+ `enumNames`) or `oneOf`/`anyOf` of `const`s. */
function enumOptions(prop: Schema): Array<[string, string]> | undefined {
  const values = prop['enum'];
  if (Array.isArray(values)) {
    const names: unknown[] = Array.isArray(prop['enumNames']) ? prop['enumNames'] : [];
    return values.map((v: unknown, i) => [String(v), String(names[i] ?? v)]);
  }
  const choices = prop['oneOf'] ?? prop['anyOf'];
  if (Array.isArray(choices) && choices.every((c: unknown) => isObject(c) && 'const' in c)) {
    return (choices as Schema[]).map((c) => [String(c['const']), String(c['title'] ?? c['const'])]);
  }
  return undefined;
}

function readFields(form: HTMLFormElement, schema: Schema): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [name, prop] of schemaProperties(schema)) {
    const multi = form.querySelector(`fieldset[data-name="${CSS.escape(name)}"]`);
    if (multi) {
      content[name] = [...multi.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.value);
      continue;
    }
    const el = form.elements.namedItem(name);
    if (!(el instanceof HTMLInputElement || el instanceof HTMLSelectElement)) continue;
    const type = el.dataset['type'];
    if (type === 'boolean' && el instanceof HTMLInputElement) content[name] = el.checked;
    else if (el.value === '') continue;
    else if (type === 'number' || type === 'integer') content[name] = Number(el.value);
    else if (type === 'enum' && (prop['type'] === 'number' || prop['type'] === 'integer'))
      content[name] = Number(el.value);
    // datetime-local gives local time without a zone; JSON Schema's date-time wants RFC 3339.
    else if (prop['format'] === 'date-time') content[name] = new Date(el.value).toISOString();
    else content[name] = el.value;
  }
  return content;
}
