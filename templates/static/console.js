// Console forms: each `form.api-form` is one call of the JSON API (same origin, the session cookie), so the pages add
// no rule of their own: the API validates, and its error message is shown in place. No inline script anywhere (CSP).
//   data-method, data-url     the call
//   data-changed-only         send only the fields whose value differs from the page's (an edit form)
//   data-body                 a fixed JSON body instead of the fields (e.g. {"messaging_token":null}); "none": no body
//   data-after                reload | goto (data-goto) | user (the answer's id) | password (into data-output) | replay
//                             | secret (the answer's data-field, shown once into data-output) | attempt (a delivery's outcome)
// Fields: a checkbox sends true/false; data-kind="int" sends a number; data-empty="null" sends null for an empty value,
// data-empty="omit" leaves it out. A form with [data-confirm] keeps its submit button disabled until that field holds
// the expected text (a typed confirmation).
'use strict';

/** After these the page stays (it shows the answer), so the button is enabled again. */
const STAYS = new Set(['password', 'replay', 'secret', 'attempt']);

function unchanged(field) {
  if (field.type === 'checkbox') return field.checked === field.defaultChecked;
  if (field.tagName === 'SELECT') return [...field.options].every((o) => o.selected === o.defaultSelected);
  return field.value === field.defaultValue;
}

function bodyOf(form) {
  if (form.dataset.body === 'none') return undefined;
  if (form.dataset.body) return JSON.parse(form.dataset.body);
  const body = {};
  for (const field of form.querySelectorAll('input[name], select[name], textarea[name]')) {
    if (field.dataset.ignore !== undefined) continue;
    if (form.dataset.changedOnly !== undefined && unchanged(field)) continue;
    if (field.type === 'checkbox') {
      body[field.name] = field.checked;
      continue;
    }
    const value = field.value.trim();
    if (value === '') {
      if (field.dataset.empty === 'null') body[field.name] = null;
      else if (field.dataset.empty !== 'omit') body[field.name] = value;
      continue;
    }
    // A number the API can check; anything else goes as typed, and the API names the field.
    body[field.name] = field.dataset.kind === 'int' && /^-?[0-9]+$/.test(value) ? Number(value) : (field.type === 'password' ? field.value : value);
  }
  return body;
}

function show(box, text) {
  if (!box) return;
  box.textContent = text;
  box.hidden = text === '';
}

async function after(form, answer) {
  const how = form.dataset.after;
  if (how === 'user') return window.location.assign(`/admin/user/${answer.id}`);
  if (how === 'goto') return window.location.assign(form.dataset.goto);
  if (how === 'password') {
    const output = document.getElementById(form.dataset.output);
    output.querySelector('code').textContent = answer.password;
    output.hidden = false;
    output.focus();
    return undefined;
  }
  if (how === 'secret') {
    const output = document.getElementById(form.dataset.output);
    output.querySelector('code').textContent = answer[form.dataset.field];
    output.hidden = false;
    form.reset();
    output.focus();
    return undefined;
  }
  if (how === 'attempt') {
    const outcome = answer.delivered ? 'Delivered' : 'Not delivered';
    const detail = answer.status === null ? answer.error : `HTTP ${answer.status}`;
    show(form.querySelector('.form-status'), `${outcome}: ${detail}, ${answer.duration_ms} ms`);
    return undefined;
  }
  if (how === 'replay') {
    const row = form.closest('tr');
    show(row.querySelector('[data-state]'), answer.state);
    show(row.querySelector('[data-notes]'), answer.error || '');
    show(form.querySelector('.form-status'), `Replayed: ${answer.state} after ${answer.attempts} ${answer.attempts === 1 ? 'attempt' : 'attempts'}`);
    return undefined;
  }
  return window.location.reload();
}

async function submit(form) {
  const error = form.querySelector('.form-error');
  const status = form.querySelector('.form-status');
  show(error, '');
  show(status, '');
  const body = bodyOf(form);
  if (form.dataset.changedOnly !== undefined && Object.keys(body).length === 0) return show(status, 'Nothing has changed.');
  const sent = body === undefined ? {} : { headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) };
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const response = await fetch(form.dataset.url, {
      method: form.dataset.method,
      credentials: 'same-origin',
      ...sent,
    });
    const answer = response.status === 204 ? {} : await response.json().catch(() => ({}));
    if (response.ok) {
      await after(form, answer);
      if (!STAYS.has(form.dataset.after)) return undefined;
    } else if (response.status === 401) {
      show(error, 'Your session has ended: log in again (this page keeps what you typed until you leave it).');
    } else {
      show(error, answer.message || `The gateway answered ${response.status}.`);
    }
  } catch {
    show(error, 'The gateway cannot be reached. Check the connection and try again.');
  }
  button.disabled = form.dataset.confirm !== undefined && !confirmed(form);
  return undefined;
}

function confirmed(form) {
  const field = form.querySelector('[data-confirm]');
  return field.value.trim().toLowerCase() === field.dataset.confirm.toLowerCase();
}

document.addEventListener('DOMContentLoaded', () => {
  for (const form of document.querySelectorAll('form.api-form')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      // No validation of our own (the forms are novalidate): the API decides, and its message is shown.
      void submit(form);
    });
    const confirm = form.querySelector('[data-confirm]');
    if (confirm) {
      form.dataset.confirm = '';
      const button = form.querySelector('button[type="submit"]');
      button.disabled = true;
      confirm.addEventListener('input', () => { button.disabled = !confirmed(form); });
    }
  }
});
