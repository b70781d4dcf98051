// Elicitation forms, rendered from the requested schema (strings with formats, numbers and integers
// with bounds, booleans, enums with titles, multi-select arrays) and read back into the answer's content.
import { api } from './api.js';
import { announce, h } from './dom.js';

export function elicitationForm(base, key, request, refresh) {
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
