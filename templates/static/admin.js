// Admin pages: the log-out button (POST /api/logout clears the HttpOnly cookie), then back to the login page.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  const button = document.getElementById('logout');
  if (button) {
    button.addEventListener('click', async () => {
      button.disabled = true;
      await fetch('/api/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
      window.location.assign('/admin/login');
    });
  }
  // Open a thread at its newest message.
  const messages = document.querySelector('.messages');
  if (messages) messages.scrollTop = messages.scrollHeight;
});
