// The live thread: follows the user's event stream (GET /api/user/{id}/events/stream, the session cookie, as any API
// client would) and, when an event arrives, re-reads this page (its conversation pinned) and swaps in the contact list,
// the thread's head and its bubbles, so new messages, ticks and archived media appear without a reload and look exactly
// as the server renders them. A lost connection resumes after the last event id (Last-Event-ID) and says so; an expired
// cursor (410) reloads the page with a notice. No inline script anywhere (CSP).
'use strict';

(() => {
  const NOTICE_KEY = 'thread-live-notice';
  const MAX_BACKOFF_MS = 15000;

  function say(text, tone) {
    const box = document.getElementById('live-status');
    if (!box) return;
    box.textContent = text;
    box.hidden = text === '';
    if (tone) box.dataset.tone = tone; else delete box.dataset.tone;
  }

  /** Near the newest message: the pane (wide screen) or the window (phone) is scrolled to its end. */
  function atEnd(messages) {
    if (messages.scrollHeight > messages.clientHeight + 1) return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 48;
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;
  }

  function toEnd(messages) {
    messages.scrollTop = messages.scrollHeight;
    const bubbles = messages.querySelectorAll('.bubble');
    const last = bubbles[bubbles.length - 1];
    if (last && messages.scrollHeight <= messages.clientHeight + 1) last.scrollIntoView({ block: 'end' });
  }

  /** Copies the parts of a freshly rendered page that events change; the reply box keeps what is being typed. */
  function swap(fresh) {
    const inbox = document.querySelector('.inbox');
    const next = fresh.querySelector('.inbox');
    if (!inbox || !next) return;
    // The credits line of a user's own inbox moves with its sends.
    const crumbs = document.querySelector('.page-head .crumbs');
    const nextCrumbs = fresh.querySelector('.page-head .crumbs');
    if (crumbs && nextCrumbs) crumbs.replaceWith(nextCrumbs);
    const messages = inbox.querySelector('.messages');
    const nextMessages = next.querySelector('.messages');
    if (!messages || !nextMessages) {
      // The conversation appeared (or went): the whole inbox changes shape.
      inbox.replaceChildren(...next.childNodes);
      const shown = inbox.querySelector('.messages');
      if (shown) toEnd(shown);
      document.dispatchEvent(new CustomEvent('thread:refreshed'));
      return;
    }
    const follow = atEnd(messages);
    const scrollTop = messages.scrollTop;
    for (const selector of ['.contacts', '.thread-head']) {
      const mine = inbox.querySelector(selector);
      const theirs = next.querySelector(selector);
      if (mine && theirs) mine.replaceWith(theirs);
    }
    messages.replaceChildren(...nextMessages.childNodes);
    const reply = inbox.querySelector('#reply');
    const nextReply = next.querySelector('#reply');
    if (reply && nextReply) {
      for (const name of ['mode', 'leftMs', 'creditsLeft']) reply.dataset[name] = nextReply.dataset[name];
    }
    if (follow) toEnd(messages); else messages.scrollTop = scrollTop;
    document.dispatchEvent(new CustomEvent('thread:refreshed'));
  }

  function start(inbox) {
    const userId = inbox.dataset.liveUser;
    const href = inbox.dataset.liveHref;
    let lastId = inbox.dataset.liveAfter;
    let refreshing = false;
    let again = false;

    async function refresh() {
      if (refreshing) { again = true; return; }
      refreshing = true;
      try {
        do {
          again = false;
          const response = await fetch(href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
          if (!response.ok) break;
          swap(new DOMParser().parseFromString(await response.text(), 'text/html'));
        } while (again);
      } catch {
        // The stream's own reconnection reports a lost connection.
      } finally {
        refreshing = false;
      }
    }

    /** Reads server-sent events from the body; resolves when the stream ends. */
    async function read(body) {
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let id = null;
      let data = false;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).replace(/\r$/, '');
          buffer = buffer.slice(end + 1);
          if (line === '') {
            if (id !== null) lastId = id;
            if (data) void refresh();
            id = null;
            data = false;
          } else if (line.startsWith('id:')) {
            id = line.slice(3).trim();
          } else if (line.startsWith('data:')) {
            data = true;
          }
        }
      }
    }

    let failures = 0;
    const stop = new AbortController();
    window.addEventListener('pagehide', () => stop.abort());

    async function follow() {
      for (;;) {
        let response;
        try {
          response = await fetch(`/api/user/${userId}/events/stream`, {
            credentials: 'same-origin', signal: stop.signal, headers: { accept: 'text/event-stream', 'last-event-id': String(lastId) },
          });
        } catch {
          response = null;
        }
        if (stop.signal.aborted) return;
        if (response && response.status === 410) {
          // Events this page missed are no longer kept: read the page again.
          sessionStorage.setItem(NOTICE_KEY, 'This page was away too long to catch up event by event, so it was reloaded.');
          window.location.reload();
          return;
        }
        if (response && response.status === 401) return say('Your session has ended: log in again to follow this conversation live.', 'warn');
        if (response && (response.status === 403 || response.status === 404)) return say('This conversation can no longer be followed live.', 'warn');
        if (response && response.ok && response.body) {
          if (failures > 0) {
            say('Reconnected: the conversation is up to date.');
            void refresh();
          }
          failures = 0;
          try {
            await read(response.body);
          } catch {
            // Cut off: resumed below from the last event id.
          }
          if (stop.signal.aborted) return;
        }
        failures += 1;
        say(response && response.status === 429
          ? 'Too many live views of this inbox are open: retrying shortly.'
          : 'Connection lost: reconnecting…', 'warn');
        await new Promise((resolve) => { setTimeout(resolve, Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 1, 4))); });
      }
    }
    void follow();
  }

  document.addEventListener('DOMContentLoaded', () => {
    const notice = sessionStorage.getItem(NOTICE_KEY);
    if (notice) {
      sessionStorage.removeItem(NOTICE_KEY);
      say(notice, 'warn');
    }
    const inbox = document.querySelector('.inbox[data-live-user]');
    if (inbox) start(inbox);
  });
})();
