// The reply box under a user's own conversation: one call of POST /api/message/send (the session cookie), free text
// while the 24 h service window is open (the time left shown), an approved template otherwise; one Idempotency-Key
// per composed message, so a double click or a repeated Enter sends once; the API's error message shown in place; and
// for a failure worth retrying, "Send again": a new send under a new key (a new credit). No inline script (CSP).
'use strict';

(() => {
  /** A random key (crypto.randomUUID needs a secure context; getRandomValues does not). */
  function newKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return `console-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  function show(box, text) {
    box.textContent = text;
    box.hidden = text === '';
  }

  /** Rounded up to the minute, as the page says it. */
  function timeLeft(ms) {
    const minutes = Math.ceil(ms / 60000);
    const h = Math.floor(minutes / 60);
    return h > 0 ? `${h} h ${String(minutes % 60).padStart(2, '0')} min left` : `${minutes} min left`;
  }

  /** A failure a new send may fix: the network throttled or did not answer, storage was down before sending, or the
   * outcome is unknown (then the message may have arrived: the text says so). */
  function retryable(status, answer) {
    if (status === 0 || status === 429 || status === 504) return true;
    if (status === 503) return answer.sent !== true;
    return status === 502 && answer.code === 'MESSAGING_OUTCOME_UNKNOWN';
  }

  function bind(form) {
    if (form.dataset.bound) return;
    form.dataset.bound = '1';
    const error = form.querySelector('#reply-error');
    const status = form.querySelector('#reply-status');
    const send = form.querySelector('#reply-send');
    const again = form.querySelector('#reply-again');
    const windowText = form.querySelector('#reply-window');
    const cost = form.querySelector('#reply-cost');
    const text = form.querySelector('#reply-body');
    let busy = false;
    let key = null;
    let keyBody = null;
    let failed = null;
    // The window's end on this browser's clock: the server's time left, counted from when the page got it.
    let endsAt = 0;

    function mode() {
      return endsAt > performance.now() ? 'text' : 'template';
    }

    function render() {
      const m = mode();
      form.dataset.mode = m;
      form.querySelector('.reply-text').hidden = m !== 'text';
      form.querySelector('.reply-template').hidden = m !== 'template';
      windowText.textContent = m === 'text'
        ? `Free text: the service window is open, ${timeLeft(endsAt - performance.now())}`
        : 'The service window is closed: send an approved template';
      const left = Number(form.dataset.creditsLeft);
      cost.textContent = `Costs 1 credit · ${left} ${left === 1 ? 'credit' : 'credits'} left this month`;
    }

    function update() {
      endsAt = performance.now() + Number(form.dataset.leftMs || 0);
      render();
    }

    function composed() {
      const body = { contact_id: Number(form.dataset.contactId) };
      if (mode() === 'text') return { ...body, type: 'text', text: { body: text.value } };
      const params = form.querySelector('#reply-template-params').value.split('\n').map((p) => p.trim()).filter((p) => p !== '');
      const template = {
        name: form.querySelector('#reply-template-name').value.trim(),
        language: { code: form.querySelector('#reply-template-language').value.trim() },
      };
      if (params.length > 0) template.components = [{ type: 'body', parameters: params.map((p) => ({ type: 'text', text: p })) }];
      return { ...body, type: 'template', template };
    }

    async function post(json) {
      busy = true;
      send.disabled = true;
      again.hidden = true;
      show(error, '');
      show(status, 'Sending…');
      let code = 0;
      let answer = {};
      try {
        const response = await fetch('/api/message/send', {
          method: 'POST', credentials: 'same-origin',
          headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': key },
          body: json,
        });
        code = response.status;
        answer = await response.json().catch(() => ({}));
      } catch {
        code = 0;
      }
      busy = false;
      send.disabled = false;
      if (code === 201) {
        form.dataset.creditsLeft = String(answer.credits_remaining);
        render();
        show(status, 'Sent.');
        if (mode() === 'text') text.value = '';
        key = null;
        keyBody = null;
        failed = null;
        return;
      }
      show(status, '');
      const upstream = answer.upstream && answer.upstream.message && !String(answer.message).includes(answer.upstream.message)
        ? ` (${answer.upstream.message})` : '';
      if (code === 0) show(error, 'The gateway cannot be reached: nothing is known to be sent. Check the connection.');
      else if (code === 401) show(error, 'Your session has ended: log in again (this page keeps what you typed until you leave it).');
      else show(error, (answer.message || `The gateway answered ${code}.`) + upstream);
      if (retryable(code, answer)) {
        failed = json;
        again.hidden = false;
      }
    }

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (busy) return;
      const json = JSON.stringify(composed());
      // The same composed message keeps its key: sending it twice gets the first answer, never a second message.
      if (json !== keyBody) {
        key = newKey();
        keyBody = json;
      }
      void post(json);
    });
    again.addEventListener('click', () => {
      if (busy || failed === null) return;
      // A real new send: a new key, so the gateway calls the network again (and charges a new credit).
      key = newKey();
      keyBody = failed;
      void post(failed);
    });
    text.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
    });
    update();
    setInterval(render, 30000);
    document.addEventListener('thread:refreshed', update);
  }

  function find() {
    const form = document.getElementById('reply');
    if (form) bind(form);
  }
  document.addEventListener('DOMContentLoaded', find);
  document.addEventListener('thread:refreshed', find);
})();
