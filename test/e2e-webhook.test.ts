// End to end over loopback HTTP: the sandbox network posts signed callbacks to the listening gateway.
import t from 'tap';
import { sendingApp, TO } from './fixtures/sending';
import { inboxRows } from './fixtures/webhooks';

const SECRET = 'e2e-app-secret';

async function listeningGateway(t: tap.Test) {
  const setup = await sendingApp(t, { config: { messagingAppSecret: SECRET } });
  const base = await setup.app.listen({ port: 0, host: '127.0.0.1' });
  setup.sandbox.configureCallbacks({ webhookUrl: `${base}/api/messaging/webhook`, appSecret: SECRET, enabled: true, delayMs: 20 });
  const api = (path: string, init: RequestInit = {}) =>
    fetch(base + path, { ...init, headers: { 'content-type': 'application/json', ...setup.auth, ...init.headers } });
  return { ...setup, api };
}

t.test('a send ends read, with sent, delivered and read in its history, all from signed callbacks', async (t) => {
  const { app, sandbox, user, api } = await listeningGateway(t);
  const sent = await api('/api/message/send', { method: 'POST', body: JSON.stringify({ to: TO, type: 'text', text: { body: 'Hello from e2e' } }) });
  t.equal(sent.status, 201);
  const { id, wamid } = await sent.json() as { id: number; wamid: string };

  await sandbox.settled();
  t.same(sandbox.deliveries.map((d) => [d.kind, d.status, d.error]), [['status', 200, null], ['status', 200, null], ['status', 200, null]]);
  t.ok(sandbox.deliveries.every((d) => d.signature?.startsWith('sha256=')), 'every callback was signed');
  t.same(inboxRows(app).map((e) => e.state), ['processed', 'processed', 'processed']);

  const row = app.messagesRepo.findById(id)!;
  t.equal(row.wamid, wamid);
  t.equal(row.status, 'read');
  t.same(app.messagesRepo.history(id).map((h) => h.status), ['sent', 'delivered', 'read']);

  const conversations = await api(`/api/user/${user.id}/conversations`);
  t.equal(conversations.status, 200);
  const [conversation] = await conversations.json() as { messages: { id: number; status: string; statuses: { status: string }[] }[] }[];
  t.match(conversation?.messages, [{ id, status: 'read', statuses: [{ status: 'sent' }, { status: 'delivered' }, { status: 'read' }] }]);
});

t.test("an injected inbound message appears in the user's conversations", async (t) => {
  const { app, sandbox, user, api } = await listeningGateway(t);
  const delivery = await sandbox.injectInbound({ phoneNumberId: user.messagingPhoneNumberId!, from: '15557654321', text: 'Hi gateway', name: 'Bea' });
  t.equal(delivery.status, 200);
  t.match(inboxRows(app), [{ rawBody: delivery.body, state: 'processed', error: null }]);

  const conversations = await api(`/api/user/${user.id}/conversations?contact=15557654321`);
  t.equal(conversations.status, 200);
  t.match(await conversations.json(), [{
    contact: { wa_id: '15557654321', name: 'Bea' }, message_count: 1,
    messages: [{ wamid: delivery.wamid, direction: 'inbound', type: 'text', text: 'Hi gateway', status: 'received' }],
  }]);
});

t.test('callbacks signed with another secret are refused and leave the message accepted', async (t) => {
  const { app, sandbox, api } = await listeningGateway(t);
  sandbox.configureCallbacks({ appSecret: 'not-the-gateway-secret' });
  const sent = await api('/api/message/send', { method: 'POST', body: JSON.stringify({ to: TO, type: 'text', text: { body: 'x' } }) });
  await sandbox.settled();
  t.same(sandbox.deliveries.map((d) => d.status), [401, 401, 401]);
  t.same(inboxRows(app), []);
  t.equal(app.messagesRepo.findById((await sent.json() as { id: number }).id)!.status, 'accepted');
});
