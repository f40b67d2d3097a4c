// POST /api/message/send with `type: "template"`: the network's own template object, sent as given through the sandbox
// (no parameters, one, header media, named parameters), one credit, listed like send2 templates.
import t from 'tap';
import { sendingApp, TO } from './fixtures/sending';

const send = (template: unknown) => ({ to: TO, type: 'template', template });

t.test('templates with no, one, header media and named parameters reach the network as given; each costs one credit', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t, { credits: 10 });
  const templates = [
    { name: 'hello_world', language: { code: 'en_US' } },
    { name: 'otp', language: { code: 'en', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '123456' }] }] },
    { name: 'shipped', language: { code: 'pt_BR' }, components: [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/box.jpg' } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'currency', currency: { fallback_value: '$10', code: 'USD', amount_1000: 10000 } }] },
      { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'TRACK' }] },
    ] },
    { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', parameter_name: 'order', text: '42' }] }] },
  ];
  for (const [i, template] of templates.entries()) {
    const res = await post('/api/message/send', send(template));
    t.equal(res.statusCode, 201, template.name);
    t.match(res.json(), { id: i + 1, to: TO, type: 'template', status: 'accepted', credits_remaining: 9 - i });
  }
  t.same(sandbox.requests.map((r) => JSON.parse(r.body)), templates.map((template) => ({
    messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'template', template,
  })), 'the template object as given');
  const listed = app.db.$client.prepare('SELECT listed_json FROM messages ORDER BY id').pluck().all().map((j) => JSON.parse(j as string).template);
  t.same(listed, [
    { name: 'hello_world', language: 'en_US', params: [] },
    { name: 'otp', language: 'en', params: ['123456'] },
    { name: 'shipped', language: 'pt_BR', params: ['Ana', '$10'] },
    { name: 'order_update', language: 'en_US', params: ['42'] },
  ]);
  t.equal(app.creditsRepo.used(user.id, new Date().toISOString().slice(0, 7)), 4);
});

t.test('a template object the network would refuse is a 400 naming the field, before any credit or network call', async (t) => {
  const { sandbox, post } = await sendingApp(t);
  const cases: [unknown, string][] = [
    [{ name: 'x' }, 'no language'],
    [{ name: 'x', language: { code: 'en' }, extra: 1 }, 'unknown field'],
    [{ name: 'x', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text' }] }] }, 'parameter without text'],
    [{ name: 'x', language: { code: 'en' }, components: [{ type: 'footer' }] }, 'unknown component'],
  ];
  for (const [template, why] of cases) {
    const res = await post('/api/message/send', send(template));
    t.same([res.statusCode, res.json().code], [400, 'VALIDATION_ERROR'], why);
  }
  const context = await post('/api/message/send', { ...send({ name: 'x', language: { code: 'en' } }), context: { message_id: 'wamid.x' } });
  t.equal(context.statusCode, 400, 'a template takes no context');
  t.equal(sandbox.requests.length, 0);
});
