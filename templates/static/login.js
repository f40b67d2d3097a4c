// Login page: posts the form as JSON to /api/login, then opens the signed-in user's pages: ?next= when it is a page
// of this site it may open (under /admin for an ADMIN, under /inbox for anyone), else /admin for an ADMIN, /inbox otherwise.
'use strict';

const AREAS = ['/admin', '/inbox'];

/** The page to open after logging in: `raw` only when it stays on this site under /admin (ADMIN) or /inbox, else the role's home. */
function safeNext(raw, role = 'ADMIN') {
  const home = role === 'ADMIN' ? '/admin' : '/inbox';
  if (typeof raw !== 'string' || !AREAS.some((area) => raw.startsWith(area))) return home;
  const base = 'http://gateway.invalid';
  let url;
  try {
    url = new URL(raw, base);
  } catch {
    return home;
  }
  // The parser resolves `..`, `%2e%2e` and backslashes; judge what it resolved to, and answer that.
  const allowed = role === 'ADMIN' ? AREAS : ['/inbox'];
  if (url.origin !== base || !allowed.some((area) => url.pathname === area || url.pathname.startsWith(`${area}/`))) return home;
  return url.pathname + url.search + url.hash;
}

/** The signed-in user's role (GET /api/me), CLIENT when it cannot be told: its pages are the safe landing. */
async function roleNow() {
  const me = await fetch('/api/me', { credentials: 'same-origin', headers: { accept: 'application/json' } }).catch(() => undefined);
  const body = me && me.ok ? await me.json().catch(() => ({})) : {};
  return body.role === 'ADMIN' ? 'ADMIN' : 'CLIENT';
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
      const role = await roleNow();
      window.location.assign(safeNext(new URLSearchParams(window.location.search).get('next'), role));
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
