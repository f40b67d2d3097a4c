// POST /api/message/send2 with a header and buttons: components in the order header, body, buttons; button indexes.
import t from 'tap';
import { sendingApp, TO } from './fixtures/sending';

const template = { to: TO, template_name: 'order_update', language: 'en_US', param1: 'Ana', param2: '42' };
const body = { type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: '42' }] };
const componentsSent = (sandbox: { requests: { body: string }[] }) => JSON.parse(sandbox.requests.at(-1)!.body).template.components;

t.test('header and buttons become components in the order header, body, buttons', async (t) => {
  const { sandbox, post } = await sendingApp(t, { credits: 20 });
  const cases: Array<[string, Record<string, unknown>, unknown[]]> = [
    ['text header', { header: { type: 'text', text: 'Order 42' } },
      [{ type: 'header', parameters: [{ type: 'text', text: 'Order 42' }] }, body]],
    ['image header by link', { header: { type: 'image', link: 'https://example.com/p.jpg' } },
      [{ type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/p.jpg' } }] }, body]],
    ['video header by id', { header: { type: 'video', id: '1479537139650973' } },
      [{ type: 'header', parameters: [{ type: 'video', video: { id: '1479537139650973' } }] }, body]],
    ['document header with filename', { header: { type: 'document', link: 'https://example.com/i.pdf', filename: 'invoice.pdf' } },
      [{ type: 'header', parameters: [{ type: 'document', document: { filename: 'invoice.pdf', link: 'https://example.com/i.pdf' } }] }, body]],
    ['location header', { header: { type: 'location', latitude: 52.52, longitude: 13.405, name: 'Depot' } },
      [{ type: 'header', parameters: [{ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Depot' } }] }, body]],
    ['buttons at their list positions', { buttons: [{ sub_type: 'quick_reply', payload: 'stop' }, { sub_type: 'url', text: 'track/42' }] },
      [body, { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'stop' }] },
        { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'track/42' }] }]],
    ['explicit indexes, header first', { buttons: [{ sub_type: 'url', text: 'x', index: 2 }, { sub_type: 'quick_reply', payload: 'p' }],
      header: { type: 'text', text: 'H' } },
    [{ type: 'header', parameters: [{ type: 'text', text: 'H' }] }, body,
      { type: 'button', sub_type: 'url', index: '2', parameters: [{ type: 'text', text: 'x' }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'p' }] }]],
  ];
  for (const [name, extra, components] of cases) {
    const res = await post('/api/message/send2', { ...template, ...extra });
    t.equal(res.statusCode, 201, name);
    t.same(componentsSent(sandbox), components, name);
  }
  t.equal(sandbox.requests.length, cases.length, 'the network took every one');
});

const BAD: Array<[string, Record<string, unknown>, string]> = [
  ['header media with both id and link', { header: { type: 'image', id: '1', link: 'https://example.com/a.jpg' } }, 'body/header must have exactly one of id or link'],
  ['header media with neither', { header: { type: 'video' } }, 'body/header must have exactly one of id or link'],
  ['filename on an image header', { header: { type: 'image', id: '1', filename: 'a.jpg' } }, 'body/header/filename is not an allowed property'],
  ['header of an unknown type', { header: { type: 'gif', id: '1' } }, 'body/header/type must be one of: text, image, video, document, location'],
  ['61-char text header', { header: { type: 'text', text: 'h'.repeat(61) } }, 'body/header/text must NOT have more than 60 characters'],
  ['location header without longitude', { header: { type: 'location', latitude: 1 } }, 'body/header/longitude is required'],
  ['button of an unknown sub_type', { buttons: [{ sub_type: 'call', payload: 'x' }] }, 'body/buttons/0/sub_type must be one of: quick_reply, url'],
  ['quick_reply without payload', { buttons: [{ sub_type: 'quick_reply', text: 'x' }] }, 'body/buttons/0/payload is required'],
  ['index 10', { buttons: [{ sub_type: 'url', text: 'x', index: 10 }] }, 'body/buttons/0/index must be <= 9'],
  ['two buttons at one index', { buttons: [{ sub_type: 'quick_reply', payload: 'a' }, { sub_type: 'quick_reply', payload: 'b', index: 0 }] },
    'body/buttons/1/index: position 0 is already taken by another button'],
  ['11 buttons', { buttons: Array.from({ length: 11 }, () => ({ sub_type: 'quick_reply', payload: 'a' })) }, 'body/buttons must NOT have more than 10 items'],
  ['no buttons', { buttons: [] }, 'body/buttons must NOT have fewer than 1 items'],
];

t.test('bad header or buttons: 400 naming the field, nothing sent or charged', async (t) => {
  const { app, sandbox, user, post } = await sendingApp(t);
  for (const [name, extra, message] of BAD) {
    const res = await post('/api/message/send2', { ...template, ...extra });
    t.same([res.statusCode, res.json()], [400, { statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request', message }], name);
  }
  t.equal(sandbox.requests.length, 0);
  t.equal(app.messagesRepo.findById(1), undefined);
  t.equal((await post('/api/message/send2', template)).json().credits_remaining, 9, 'no credit was taken');
});

t.test('the OpenAPI document is 3.0 without `dependencies`, and shows every send type with an example', async (t) => {
  const { app } = await sendingApp(t);
  const doc = (await app.inject({ url: '/docs/json' })).json();
  const text = JSON.stringify(doc);
  t.notOk(text.includes('"dependencies"'));
  const content = doc.paths['/api/message/send'].post.requestBody.content['application/json'];
  t.same(Object.keys(content.examples), ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts', 'interactive', 'reaction', 'template']);
  t.equal(content.schema.oneOf.length, 11);
  t.same(content.schema.discriminator, { propertyName: 'type' });
});
