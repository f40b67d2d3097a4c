// The OpenAPI document at /docs/json: valid for a maintained validator, and exact where generated clients and fuzzers rely on it.
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv from 'ajv';
import t from 'tap';
import { EMAIL_PATTERN } from '../schemas/common';
import { finishDocument } from '../src/plugins/openapi-document';
import { buildTestApp } from './helper';

type Json = Record<string, any>;
interface Op { path: string; method: string; op: Json }

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const PUBLIC = ['GET /healthz', 'GET /readyz', 'POST /api/login', 'GET /api/messaging/webhook', 'POST /api/messaging/webhook'];

function operations(doc: Json): Op[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, op: item[method] })));
}

/** Every object in `node` with the key path leading to it. */
function* objects(node: unknown, at = ''): Generator<[string, Json]> {
  if (Array.isArray(node)) for (const [i, item] of node.entries()) yield* objects(item, `${at}/${i}`);
  else if (typeof node === 'object' && node !== null) {
    yield [at, node as Json];
    for (const [key, value] of Object.entries(node)) yield* objects(value, `${at}/${key}`);
  }
}

async function fetchDocument(t: Parameters<typeof buildTestApp>[0] & { equal: (a: unknown, b: unknown) => void }) {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(res.statusCode, 200);
  return { app, doc: res.json() as Json };
}

t.test('a maintained validator accepts the document', async (t) => {
  const { doc } = await fetchDocument(t);
  t.equal(doc.openapi, '3.0.3');
  // validate() dereferences in place: give it a copy.
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never), 'swagger-parser: schema and semantic checks');
  // And it does fail: a keyword OpenAPI 3.0 lacks is refused.
  const broken = structuredClone(doc);
  broken.paths['/api/login'].post.requestBody.content['application/json'].schema.dependencies = { email: ['password'] };
  await t.rejects(SwaggerParser.validate(broken as never), 'the validator catches a `dependencies` keyword');
});

t.test('every operation has a unique operationId and a summary, and no text cites the contract document', async (t) => {
  const { doc } = await fetchDocument(t);
  const ops = operations(doc);
  t.ok(ops.length >= 17, `${ops.length} operations`);
  const ids = ops.map(({ op }) => op.operationId);
  for (const { path, method, op } of ops) {
    t.match(op.operationId, /^[a-z][A-Za-z]+$/, `${method} ${path}: operationId in lowerCamelCase`);
    t.ok(typeof op.summary === 'string' && op.summary.length > 3 && op.summary.length <= 80, `${method} ${path}: short summary`);
  }
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  t.notMatch(JSON.stringify(doc), /SPEC|§/, 'descriptions explain in place');
});

t.test('public routes say so with security: []; the others need a session and document 401/403', async (t) => {
  const { doc } = await fetchDocument(t);
  for (const { path, method, op } of operations(doc)) {
    const name = `${method.toUpperCase()} ${path}`;
    if (PUBLIC.includes(name)) {
      t.same(op.security, [], `${name}: public`);
      continue;
    }
    t.ok(op.security?.some((s: Json) => 'bearer' in s) && op.security.some((s: Json) => 'cookie' in s), `${name}: bearer or cookie`);
    for (const status of ['401', '403']) t.ok(op.responses[status], `${name}: ${status}`);
  }
  // Logout works with or without a session.
  t.same(doc.paths['/api/logout'].post.security, [{}, { bearer: [] }, { cookie: [] }]);
});

t.test('the handshake answers text/plain, as documented', async (t) => {
  const { app, doc } = await buildTestApp(t, { messagingVerifyToken: 'vt' }).then(async ({ app }) => ({ app, doc: (await app.inject({ url: '/docs/json' })).json() }));
  const ok = doc.paths['/api/messaging/webhook'].get.responses['200'];
  t.same(Object.keys(ok.content), ['text/plain'], 'no JSON on the 200');
  t.same(ok.content['text/plain'].schema.type, 'string');
  const res = await app.inject({ url: '/api/messaging/webhook?hub.mode=subscribe&hub.verify_token=vt&hub.challenge=4242' });
  t.equal(res.statusCode, 200);
  t.equal(res.body, '4242', 'the challenge as it is, not a JSON string');
  t.match(res.headers['content-type'], /^text\/plain/);
});

t.test('a parameter with a default is optional; a body that may be absent is not required', async (t) => {
  const { doc } = await fetchDocument(t);
  const users = doc.paths['/api/users'].get.parameters as Json[];
  t.same(users.map((p) => [p.name, p.required]), [['limit', false], ['offset', false]]);
  for (const { path, method, op } of operations(doc)) {
    for (const p of op.parameters ?? []) {
      if (p.schema?.default !== undefined) t.equal(p.required, false, `${method} ${path} ${p.name}`);
    }
  }
  t.equal(doc.paths['/api/logout'].post.requestBody.required, false, 'logout body');
  t.equal(doc.paths['/api/webhook/events/{id}/replay'].post.requestBody.required, false, 'replay body');
  t.equal(doc.paths['/api/login'].post.requestBody.required, true, 'login body');
});

t.test('every operation taking a body documents 413, 415 and an example the server accepts as valid', async (t) => {
  const { doc } = await fetchDocument(t);
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('email', EMAIL_PATTERN).addFormat('date-time', true);
  const resolved = await SwaggerParser.dereference(structuredClone(doc) as never) as Json;
  const withBody = operations(resolved).filter(({ op }) => op.requestBody);
  t.same(withBody.map(({ op }) => op.operationId).sort(), [
    'createApiKey', 'createEventEndpoint', 'createUser', 'login', 'logout', 'markMessageRead', 'queueMessageBatch', 'receiveWebhook',
    'replayEventEndpoint', 'replayWebhookEvent', 'resetUserPassword', 'sendMessage', 'sendTemplateMessage', 'updateEventEndpoint', 'updateUser',
    'uploadMedia',
  ]);
  for (const { op } of withBody) {
    for (const status of ['400', '413', '415']) t.ok(op.responses[status], `${op.operationId}: ${status}`);
    // The upload is multipart: a file, not a JSON example.
    if (op.operationId === 'uploadMedia') {
      t.ok(op.requestBody.content['multipart/form-data'], 'uploadMedia: multipart/form-data');
      continue;
    }
    t.ok(op.responses['503'], `${op.operationId}: 503`);
    const media = op.requestBody.content['application/json'];
    // One example, or (the send, one per message type) a map of named ones.
    const examples = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((named) => (named as Json).value);
    t.ok(examples.length > 0, `${op.operationId}: example`);
    for (const example of examples) t.ok(ajv.validate(media.schema, example), `${op.operationId}: the example is valid (${ajv.errorsText()})`);
  }
  // The template's no-gaps rule is checked by the server (a 400 naming the field) and stated in the description.
  const send2 = resolved.paths['/api/message/send2'].post.requestBody.content['application/json'].schema;
  t.match(send2.description, /no gaps/);
});

t.test('the webhook callback documents its body and the signature header', async (t) => {
  const { doc } = await fetchDocument(t);
  const post = doc.paths['/api/messaging/webhook'].post;
  const body = post.requestBody.content['application/json'];
  t.same(body.schema.required, ['object', 'entry']);
  t.equal(body.example.entry[0].changes[0].field, 'messages');
  const header = (post.parameters as Json[]).find((p) => p.in === 'header' && p.name === 'x-hub-signature-256');
  t.ok(header, 'X-Hub-Signature-256');
  t.match(header!.description, /HMAC-SHA256 of the raw body/);
  t.equal(new RegExp(header!.schema.pattern).test(`sha256=${'ab'.repeat(32)}`), true);
});

t.test('only OpenAPI 3.0 keywords; the e-mail is documented by the rule the server applies', async (t) => {
  const { doc } = await fetchDocument(t);
  const found: string[] = [];
  for (const [at, node] of objects(doc)) {
    if (at.includes('/example') || at.endsWith('/properties')) continue;
    for (const keyword of ['dependencies', 'const', '$schema', 'if', 'patternProperties']) if (keyword in node) found.push(`${keyword} at ${at}`);
    if (node.format === 'email') found.push(`format: email at ${at}`);
    if (Array.isArray(node.examples)) found.push(`examples array at ${at}`);
    if (node.type === 'null' || Array.isArray(node.type)) found.push(`type ${JSON.stringify(node.type)} at ${at}`);
  }
  t.same(found, [], 'nothing OpenAPI 3.0 lacks');
  const email = doc.paths['/api/user/create'].post.requestBody.content['application/json'].schema.properties.email;
  t.equal(email.pattern, EMAIL_PATTERN.source);
  t.ok(new RegExp(email.pattern).test('admin@localhost'), 'admin@localhost, as the server accepts');
  t.notOk(new RegExp(email.pattern).test('a b@c'));
});

t.test('the error shape is one component, referenced by every error answer', async (t) => {
  const { doc } = await fetchDocument(t);
  t.same(doc.components.schemas.ErrorResponse.required, ['statusCode', 'code', 'error', 'message']);
  // Stated in the components only: the shape itself (and the one extending it with `upstream`).
  const shapes = [...objects(doc)].filter(([, node]) => node.properties?.statusCode && node.properties?.code).map(([at]) => at);
  t.same(shapes.sort(), ['/components/schemas/ErrorResponse', '/components/schemas/SendBadGatewayResponse',
    '/components/schemas/SendRateLimitedResponse', '/components/schemas/SendStorageResponse', '/components/schemas/UploadTooManyResponse', '/components/schemas/UpstreamErrorResponse']);
  for (const { path, method, op } of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
      t.ok(response.headers?.['x-request-id'], `${method} ${path} ${status}: x-request-id`);
      if (status === '429' || status === '503') t.ok(response.headers['retry-after'], `${method} ${path} ${status}: Retry-After`);
      if (Number(status) < 400) continue;
      const ref = response.content['application/json'].schema.$ref;
      const refs = ['ErrorResponse', 'UpstreamErrorResponse', 'SendBadGatewayResponse', 'SendStorageResponse', 'UploadTooManyResponse', 'SendRateLimitedResponse'].map((name) => `#/components/schemas/${name}`);
      t.ok(refs.includes(ref), `${method} ${path} ${status}: ${ref}`);
      t.notMatch(response.description, /^Default Response$/, `${method} ${path} ${status}: says when`);
    }
    t.ok(op.responses['500'], `${method} ${path}: 500`);
  }
  t.ok(doc.paths['/api/login'].post.responses['200'].headers['set-cookie'], 'Set-Cookie on login');
  t.ok(doc.paths['/api/user/create'].post.responses['201'].headers.location, 'Location on create');
  t.ok(doc.paths['/api/message/send'].post.responses['201'].headers['idempotent-replayed'], 'Idempotent-Replayed on send');
});

t.test('finishDocument refuses two different schemas under one title', async (t) => {
  const schema = (type: string) => ({ title: 'Same', type });
  const doc = { openapi: '3.0.3', paths: { '/a': { get: { responses: { 200: { content: { 'application/json': { schema: schema('string') } } } } } },
    '/b': { get: { responses: { 200: { content: { 'application/json': { schema: schema('integer') } } } } } } } };
  t.throws(() => finishDocument(doc), /two different schemas are titled Same/);
  const same = { ...doc, paths: { ...doc.paths, '/b': doc.paths['/a'] } };
  t.same(finishDocument(same).components, { schemas: { Same: schema('string') } });
});

t.test('the shapes a client generator needs are named components, with enums, and referenced by the operations', async (t) => {
  const { doc } = await fetchDocument(t);
  const schemas = doc.components.schemas as Record<string, Json>;
  for (const name of ['Message', 'Conversation', 'Contact', 'Event', 'SendAnswer']) t.ok(schemas[name], `${name} is a component`);
  const message = schemas.Message!.properties as Record<string, Json>;
  t.same(message.direction!.enum, ['inbound', 'outbound']);
  t.same(message.status!.enum, ['queued', 'scheduled', 'pending', 'accepted', 'sent', 'delivered', 'read', 'failed', 'received']);
  t.ok((message.type!.enum as string[]).includes('template') && (message.type!.enum as string[]).includes('interactive'), 'message types');
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (op: Json, status: string) => ((op.responses as Json)[status] as Json & { content: Record<string, { schema: Json }> }).content['application/json']!.schema;
  t.same(json(doc.paths['/api/message/{id}'].get, '200'), ref('Message'));
  t.same(json(doc.paths['/api/user/{id}/conversations'].get, '200').items, ref('Conversation'));
  t.same((json(doc.paths['/api/user/{id}/conversations/{contact_id}/messages'].get, '200').properties as Json & { messages: Json }).messages.items, ref('Message'));
  t.same((schemas.Conversation!.properties as Record<string, Json>).contact, ref('Contact'));
  t.same((schemas.Conversation!.properties as Record<string, Json & { items: Json }>).messages!.items, ref('Message'));
  const eventData = (schemas.Event!.properties as Record<string, Json & { properties: Record<string, Json> }>).data!.properties;
  t.match(eventData.message, { allOf: [ref('Message')], nullable: true });
  t.match(eventData.contact, { allOf: [ref('Contact')], nullable: true });
  t.same(json(doc.paths['/api/message/send'].post, '201'), ref('SendAnswer'));
  t.same(json(doc.paths['/api/message/send2'].post, '201'), ref('SendAnswer'));
});
