// Every page: the log-out buttons (POST /api/logout clears the HttpOnly cookie, then the login page), and a thread
// opened at its newest message.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('[data-logout]')) {
    button.addEventListener('click', async () => {
      button.disabled = true;
      await fetch('/api/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
      window.location.assign('/admin/login');
    });
  }
  // Open a thread at its newest message: the message list scrolls inside its pane on a wide screen; on a phone the
  // page itself scrolls, so the newest bubble is brought into view as well.
  const messages = document.querySelector('.messages');
  if (messages) {
    messages.scrollTop = messages.scrollHeight;
    const bubbles = messages.querySelectorAll('.bubble');
    const last = bubbles[bubbles.length - 1] || messages.lastElementChild;
    if (last && messages.scrollHeight <= messages.clientHeight + 1) last.scrollIntoView({ block: 'end' });
  }
});
