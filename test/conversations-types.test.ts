// The conversations view filtered by type reads texts and other types through different indexes (texts are left out of
// the per-type index, which every text would otherwise be written into): each view keeps the order of the unfiltered
// one, ties on the time by id, counts its own messages and shows its latest 200, also when a conversation has more.
import t, { type Test } from 'tap';
import type { App } from '../src/app';
import { MESSAGES_PER_CONVERSATION } from '../src/db/conversations-repo';
import { bearer, buildTestApp, createUser } from './helper';
import { inbound } from './fixtures/conversations';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const T0 = NOW - 86_400_000;

interface Listed { contact: { wa_id: string }; message_count: number; messages: { id: number; type: string }[] }

async function view(t: Test, app: App, userId: number, headers: Record<string, string>, type?: string): Promise<Listed[]> {
  const res = await app.inject({ method: 'GET', url: `/api/user/${userId}/conversations?filter=all${type ? `&type=${type}` : ''}`, headers });
  t.equal(res.statusCode, 200, `type ${type ?? '(all)'}`);
  return res.json() as Listed[];
}

t.test('each type view counts its own messages and shows its latest 200 in time order, ties by id', async (t) => {
  const { app } = await buildTestApp(t, {}, { now: () => new Date(NOW) });
  const ana = await createUser(app, { email: 'ana@example.com', messagingPhoneNumberId: '1001', messagingToken: 'tok' });
  // 450 messages in one conversation, three at each instant (text, image, text), stored newest instant first so that
  // ids do not follow time; and one of another contact, to be left out of each view but its own.
  const types = ['text', 'image', 'text'];
  const stored: { id: number; type: string; at: number }[] = [];
  for (let instant = 149; instant >= 0; instant--) {
    for (const type of types) {
      inbound(app, ana.id, { from: '15551230001', at: T0 + instant * 1000, type, text: type === 'text' ? 'hi' : null });
      stored.push({ id: stored.length + 1, type, at: T0 + instant * 1000 });
    }
  }
  inbound(app, ana.id, { from: '15551230002', at: T0 - 1000, type: 'sticker', text: null });
  const inOrder = [...stored].sort((a, b) => a.at - b.at || a.id - b.id);
  const latest = (of: typeof stored) => of.slice(-MESSAGES_PER_CONVERSATION).map((m) => m.id);
  const headers = bearer(app, ana);

  const all = await view(t, app, ana.id, headers);
  t.same(all.map((c) => [c.contact.wa_id, c.message_count]), [['15551230001', 450], ['15551230002', 1]]);
  t.same(all[0]!.messages.map((m) => m.id), latest(inOrder), 'all types: the latest 200 by time, then id');

  const texts = await view(t, app, ana.id, headers, 'text');
  t.same(texts.map((c) => c.message_count), [300]);
  t.same(texts[0]!.messages.map((m) => m.id), latest(inOrder.filter((m) => m.type === 'text')), 'texts: the same order');
  t.ok(texts[0]!.messages.every((m) => m.type === 'text'));

  const images = await view(t, app, ana.id, headers, 'image');
  t.same(images.map((c) => c.message_count), [150]);
  t.same(images[0]!.messages.map((m) => m.id), inOrder.filter((m) => m.type === 'image').map((m) => m.id), 'images: all 150, the same order');

  t.same((await view(t, app, ana.id, headers, 'sticker')).map((c) => [c.contact.wa_id, c.message_count, c.messages.length]), [['15551230002', 1, 1]]);
  t.same(await view(t, app, ana.id, headers, 'video'), []);
});
