// A typed client generated from /docs/json (openapi-typescript + openapi-fetch) type-checks and drives the real app over HTTP.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { createAdmin, PASSWORD, tempDir } from './helper';
import { sendingApp, TO } from './fixtures/sending';

const ROOT = resolve(__dirname, '..');

/** What a script author writes against the generated types: every call, body and answer is typed from the document. */
const SCRIPT = `
import type { Client } from 'openapi-fetch';
import type { components, paths } from './api';

type User = components['schemas']['User'];
type ErrorResponse = components['schemas']['ErrorResponse'];
type Message = components['schemas']['Message'];
type Conversation = components['schemas']['Conversation'];
type Contact = components['schemas']['Contact'];
type Event = components['schemas']['Event'];
type SendAnswer = components['schemas']['SendAnswer'];

export async function drive(client: Client<paths>, who: { admin: string; client: string; clientId: number; password: string; to: string }) {
  const login = async (email: string) => {
    const { data, error, response } = await client.POST('/api/login', { body: { email, password: who.password } });
    if (error) throw new Error('login: ' + error.code);
    return { message: data.message, cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]! };
  };
  const admin = await login(who.admin);
  const asAdmin = { cookie: admin.cookie };

  const created = await client.POST('/api/user/create', {
    headers: asAdmin, body: { email: 'ben@example.com', password: 'long enough', monthly_credits: 5, role: 'CLIENT' },
  });
  if (created.error) throw new Error('create: ' + created.error.code);
  const user: User = created.data;
  const taken = await client.POST('/api/user/create', { headers: asAdmin, body: { email: 'BEN@example.com', password: 'long enough' } });
  const conflict: ErrorResponse | undefined = taken.error;

  const ana = await login(who.client);
  const send = () => client.POST('/api/message/send', {
    headers: { cookie: ana.cookie }, params: { header: { 'idempotency-key': 'order-42' } },
    body: { to: who.to, type: 'text', text: { body: 'Hello from a generated client' } },
  });
  const sent = await send();
  if (sent.error) throw new Error('send: ' + sent.error.code);
  const again = await send();

  const listed = await client.GET('/api/users', { headers: asAdmin, params: { query: { limit: 10 } } });
  if (listed.error) throw new Error('list: ' + listed.error.code);
  const threads = await client.GET('/api/user/{id}/conversations', { headers: { cookie: ana.cookie }, params: { path: { id: who.clientId } } });
  if (threads.error) throw new Error('conversations: ' + threads.error.code);
  const conversations: Conversation[] = threads.data;
  const contact: Contact | undefined = conversations[0]?.contact;
  const direction: Message['direction'] | undefined = conversations[0]?.messages[0]?.direction;
  // 201 (sent now) and 202 (queued) are both successes of this operation: the status code tells them apart.
  if (sent.response.status !== 201) throw new Error('send: not sent at once');
  const answer = sent.data as SendAnswer;
  const wanted: Event['type'][] = ['message.received', 'message.status'];

  return {
    loggedIn: admin.message, created: user, location: created.response.headers.get('location'), conflict: conflict?.code,
    sent: { status: sent.response.status, wamid: answer.wamid, credits: answer.credits_remaining },
    replayed: again.response.headers.get('idempotent-replayed'), replayedWamid: again.data?.wamid,
    emails: listed.data.users.map((u) => u.email), total: listed.data.total,
    texts: threads.data.flatMap((c) => c.messages.map((m) => m.text)),
    named: { contactId: contact?.id, direction, answerType: answer.type, wanted },
  };
}
`;

/** Type errors of `script` against the generated `api.d.ts` in `dir`, as text (empty when it type-checks). */
function typeErrors(dir: string, script: string): string[] {
  const file = join(dir, 'client.ts');
  writeFileSync(file, script);
  const program = ts.createProgram([file], {
    strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')],
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    // The script lives in a temp dir: point it at this project's openapi-fetch (its own imports resolve from there).
    baseUrl: ROOT, paths: { 'openapi-fetch': ['node_modules/openapi-fetch/dist/index.d.ts'] },
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

t.test('a client generated from the document type-checks, rejects wrong calls, and drives login, create, send and listing', async (t) => {
  const { app, sandbox, user: ana } = await sendingApp(t);
  await createAdmin(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;

  // Generate the types from the document the server serves, now: nothing committed can go stale.
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const doc = await (await fetch(`${baseUrl}/docs/json`)).json() as Parameters<typeof openapiTS>[0];
  const dir = tempDir(t, 'openapi-client-');
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc)));

  t.same(typeErrors(dir, SCRIPT), [], 'the script type-checks against the generated client');
  // The check bites: a misspelt field, a wrong type, an unknown route and a missing path param are caught.
  const wrong: [string, string, RegExp][] = [
    ['password: who.password }', 'pasword: who.password }', /pasword/],
    ['monthly_credits: 5', "monthly_credits: '5'", /string.*number|number/],
    ["'/api/users'", "'/api/userz'", /userz/],
    ['params: { path: { id: who.clientId } }', 'params: { path: {} }', /id/],
    ["text: { body: 'Hello", "text: { bdy: 'Hello", /bdy/],
    ['answer.wamid', 'answer.wamidd', /wamidd/],
    ["'message.received', 'message.status'", "'message.recieved', 'message.status'", /message\.recieved/],
  ];
  for (const [from, to, expected] of wrong) {
    t.ok(SCRIPT.includes(from), `mutation applies: ${from}`);
    const errors = typeErrors(dir, SCRIPT.replace(from, to));
    t.ok(errors.some((e) => expected.test(e)), `${to}: ${errors[0] ?? 'no type error'}`);
  }

  // The very script that type-checked, run against the real app over loopback HTTP.
  const { default: createClient } = await import('openapi-fetch');
  const compiled = ts.transpileModule(SCRIPT, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const exported: { drive?: (client: unknown, who: object) => Promise<Record<string, any>> } = {};
  new Function('exports', 'require', compiled)(exported, require);
  const result = await exported.drive!(createClient({ baseUrl }), {
    admin: 'admin@example.com', client: ana.email, clientId: ana.id, password: PASSWORD, to: TO,
  });

  t.equal(result.loggedIn, 'Login success');
  t.match(result.created, { email: 'ben@example.com', role: 'CLIENT', monthly_credits: 5, credits_remaining: 5, messaging_token_set: false });
  t.equal(result.location, `/api/user/${result.created.id}`, 'Location names the new user');
  t.same(app.usersRepo.findById(result.created.id)?.email, 'ben@example.com', 'stored');
  t.equal(result.conflict, 'EMAIL_TAKEN', 'the typed error carries the code');
  t.match(result.sent, { status: 201, credits: 9 });
  t.match(result.sent.wamid, /^wamid\./);
  t.equal(result.replayed, 'true', 'the repeat is a replay');
  t.equal(result.replayedWamid, result.sent.wamid);
  const sends = sandbox.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages'));
  t.equal(sends.length, 1, 'one send reached the network');
  t.match(JSON.parse(sends[0]!.body), { to: TO, type: 'text', text: { body: 'Hello from a generated client' } });
  t.same(result.emails, ['ana@example.com', 'admin@example.com', 'ben@example.com']);
  t.equal(result.total, 3);
  t.same(result.texts, ['Hello from a generated client']);
  t.same(result.named, { contactId: 1, direction: 'outbound', answerType: 'text', wanted: ['message.received', 'message.status'] }, 'the named components type real answers');
});
