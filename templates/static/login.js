// Login page: posts the form as JSON to /api/login, then follows ?next= when it is a page under /admin.
'use strict';

/** The page to open after logging in: `raw` only when it stays on this site under /admin, else /admin. */
function safeNext(raw) {
  if (typeof raw !== 'string' || !raw.startsWith('/admin')) return '/admin';
  const base = 'http://gateway.invalid';
  let url;
  try {
    url = new URL(raw, base);
  } catch {
    return '/admin';
  }
  // The parser resolves `..`, `%2e%2e` and backslashes; judge what it resolved to, and answer that.
  if (url.origin !== base || !(url.pathname === '/admin' || url.pathname.startsWith('/admin/'))) return '/admin';
  return url.pathname + url.search + url.hash;
}

async function logIn(form, errorBox) {
  errorBox.hidden = true;
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const response = await fetch('/api/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify({ email: form.email.value.trim(), password: form.password.value }),
    });
    if (response.ok) {
      window.location.assign(safeNext(new URLSearchParams(window.location.search).get('next')));
      return;
    }
    const body = await response.json().catch(() => ({}));
    const wait = response.headers.get('retry-after');
    errorBox.textContent = (body.message || 'Logging in failed') + (response.status === 429 && wait ? ` Try again in ${wait} s.` : '');
  } catch {
    errorBox.textContent = 'The gateway cannot be reached. Check the connection and try again.';
  }
  errorBox.hidden = false;
  button.disabled = false;
}

if (typeof document !== 'undefined') {
  document.addEventListener('DOMContentLoaded', () => {
    const form = document.getElementById('login-form');
    const errorBox = document.getElementById('login-error');
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      void logIn(form, errorBox);
    });
  });
}
if (typeof module === 'object' && module.exports) module.exports = { safeNext };
