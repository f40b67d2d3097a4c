// Finishes the generated OpenAPI document: what holds for every route is stated once here, and the few JSON Schema
// keywords OpenAPI 3.0 lacks are rewritten to the rule the server really applies.
import { EMAIL_PATTERN } from '../../schemas/common';

type Json = Record<string, unknown>;
interface Operation { requestBody?: Json & { content: Record<string, { schema: Json }> }; parameters?: Json[]; responses: Record<string, Json>; security?: unknown[] }

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const COMPONENTS = '#/components/schemas/';

/** Why each error status is answered, for the response descriptions (the body's `code` says which case). */
const ERROR_REASONS: Record<string, string> = {
  400: 'Invalid request: bad JSON (`INVALID_JSON`) or a field that breaks its rule (`VALIDATION_ERROR`, the message names the field)',
  401: 'No valid session: token missing, invalid, expired, revoked, or of a deleted user (`UNAUTHORIZED`)',
  402: 'No credits left this month',
  403: 'Authenticated but not allowed: account disabled (`ACCOUNT_DISABLED`) or role not allowed (`FORBIDDEN`)',
  404: 'No such resource',
  409: 'Conflicts with the current state (the code names it)',
  413: 'Request body too large (`PAYLOAD_TOO_LARGE`)',
  415: 'Request body is not `application/json` (`UNSUPPORTED_MEDIA_TYPE`); an empty body of any type is accepted where no body is needed',
  422: 'The request cannot be processed as given (the code names why)',
  429: 'Too many requests: retry after `Retry-After` seconds',
  500: 'Unexpected server error (no internals are disclosed; the `x-request-id` finds it in the log)',
  502: 'The messaging network refused the request',
  503: 'Temporarily unavailable: storage failing (`STORAGE_UNAVAILABLE`), too many requests being received (`BUSY`) or not configured; retry after `Retry-After` seconds where given',
  504: 'The messaging network did not answer in time',
};

const REQUEST_ID = { description: 'Id of this request, also in the log (a short plain id sent by the caller is kept)', schema: { type: 'string' } };
const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } };

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Data, not schemas: copied as they are (an example may well contain a `title` or a `const`). */
const VALUES = new Set(['example', 'examples', 'default', 'enum', 'const']);

/**
 * Applies `visit` to every object in `node`, depth first (children before parents), replacing it by the result.
 * A `properties` map is not a schema and may name a field `example` or `title`: its entries are walked, it is not visited.
 */
function rewrite(node: unknown, visit: (value: Json) => Json, isMap = false): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, visit));
  if (!isObject(node)) return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) {
    copy[key] = !isMap && VALUES.has(key) ? value : rewrite(value, visit, !isMap && key === 'properties');
  }
  return isMap ? copy : visit(copy);
}

/** OpenAPI 3.0 has no `dependencies`: `{a: ['b']}` is "a absent, or b present", spelled with anyOf/not. */
function withoutDependencies(schema: Json): Json {
  const { dependencies, ...rest } = schema;
  // Only the keyword (names to lists of names), not a property that happens to be called `dependencies`.
  if (!isObject(dependencies) || !Object.values(dependencies).every(Array.isArray)) return schema;
  const rules = Object.entries(dependencies).map(([name, needs]) => ({
    anyOf: [{ not: { required: [name] } }, { required: needs as string[] }],
  }));
  return { ...rest, allOf: [...((rest.allOf as unknown[]) ?? []), ...rules] };
}

/** JSON Schema keywords OpenAPI 3.0 spells otherwise (where @fastify/swagger left them: header and text schemas). */
function openapi30(schema: Json): Json {
  const { const: constant, examples, ...rest } = schema;
  if (constant !== undefined) rest.enum = [constant];
  // A media type's `examples` is a map of named examples, not an array: that one stays.
  if (Array.isArray(examples)) rest.example ??= examples[0];
  else if (examples !== undefined) rest.examples = examples;
  return rest;
}

/** The validator's `email` format is EMAIL_PATTERN (`admin@localhost` passes): document that, not RFC 5322. */
function emailAsPattern(schema: Json): Json {
  if (schema.format !== 'email') return schema;
  const { format: _format, ...rest } = schema;
  return { ...rest, pattern: EMAIL_PATTERN.source };
}

/** Schemas with a `title` are named components: stated once, referenced everywhere (one name, one shape). */
function hoistTitled(document: Json): Json {
  const components: Record<string, Json> = {};
  const paths = rewrite(document.paths, (value) => {
    const title = value.title;
    if (typeof title !== 'string' || !('type' in value || 'properties' in value || 'allOf' in value)) return value;
    // `nullable` and a description belong to the place that uses the shape (a nullable Message, an event's contact).
    const { nullable, ...shape } = value;
    const seen = components[title];
    const { description: _d1, ...seenShape } = seen ?? {};
    const { description, ...bareShape } = shape;
    if (seen && JSON.stringify(seenShape) !== JSON.stringify(bareShape)) throw new Error(`OpenAPI: two different schemas are titled ${title}`);
    components[title] ??= shape;
    const ref = { $ref: `${COMPONENTS}${title}` };
    const ownDescription = description !== undefined && description !== components[title]!.description ? { description } : {};
    if (nullable !== true && ownDescription.description === undefined) return ref;
    return { allOf: [ref], ...(nullable === true ? { nullable: true } : {}), ...ownDescription };
  });
  const existing = ((document.components as Json | undefined)?.schemas ?? {}) as Json;
  return { ...document, paths, components: { ...(document.components as Json), schemas: { ...existing, ...components } } };
}

const errorRef = (status: string, content?: Json): Json => ({
  description: ERROR_REASONS[status] ?? 'Error',
  content: content ?? { 'application/json': { schema: { $ref: `${COMPONENTS}ErrorResponse` } } },
});

/** Answers every route may give because of a global plugin, not of its own handler. */
function finishOperation(operation: Operation): void {
  const { responses } = operation;
  const add = (status: number) => {
    responses[status] ??= errorRef(String(status));
  };
  // A query parameter with a default may be left out: the validator fills it in.
  for (const parameter of operation.parameters ?? []) {
    if (isObject(parameter.schema) && parameter.schema.default !== undefined) parameter.required = false;
  }
  const body = operation.requestBody;
  if (body) {
    // A body that may be null may be absent too (an empty body is no body).
    if (Object.values(body.content).some((media) => media.schema.nullable === true)) body.required = false;
    // Any body may be too large, of another type, or arrive while too many others are being received.
    for (const status of [400, 413, 415, 503]) add(status);
  }
  const secured = (operation.security ?? []).some((scheme) => isObject(scheme) && Object.keys(scheme).length > 0);
  if (secured) for (const status of [401, 403]) add(status);
  add(500);
  const SUCCESS: Record<string, string> = { 200: 'OK', 201: 'Created', 204: 'No content' };
  for (const [status, response] of Object.entries(responses)) {
    // A shared error shape's own description says what it is; the answer's says when it is given.
    const schema = (response.content as Record<string, { schema?: Json }> | undefined)?.['application/json']?.schema;
    if (Number(status) >= 400 && typeof schema?.$ref === 'string' && ERROR_REASONS[status]) response.description = ERROR_REASONS[status];
    if (response.description === 'Default Response') response.description = SUCCESS[status] ?? 'Answer';
    const headers: Json = { 'x-request-id': REQUEST_ID, ...(response.headers as Json | undefined) };
    if (status === '429' || status === '503') headers['retry-after'] ??= RETRY_AFTER;
    response.headers = headers;
  }
}

export function finishDocument(generated: object): Json {
  // A copy: the generated document may share objects with the routes' live schemas.
  const plain = JSON.parse(JSON.stringify(generated)) as Json;
  const document = hoistTitled(rewrite(plain, (value) => openapi30(emailAsPattern(withoutDependencies(value)))) as Json);
  for (const path of Object.values(document.paths as Record<string, Json>)) {
    for (const method of METHODS) if (isObject(path[method])) finishOperation(path[method] as unknown as Operation);
    // A HEAD declared with its GET shares the GET's schema: operation ids must stay unique for client generators.
    const head = path.head as { operationId?: string } | undefined;
    if (head?.operationId !== undefined && head.operationId === (path.get as { operationId?: string } | undefined)?.operationId) {
      head.operationId = `${head.operationId}Head`;
    }
  }
  return document;
}
