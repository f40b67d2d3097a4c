// Request validation and body parsing per SPEC §2: strict JSON bodies, plainly written query strings and params.
import Ajv, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { EMAIL_PATTERN } from '../../schemas/common';
import { AppError } from '../errors';
import { isEmptyJson, parseJsonBody } from '../support/json-body';

function ajv(options: Options): Ajv {
  const instance = new Ajv({ useDefaults: true, allErrors: false, strict: false, ...options });
  addFormats(instance);
  instance.addFormat('email', EMAIL_PATTERN);
  return instance;
}

/** Digits only, no leading zero: Ajv's coercion alone would take `1e3`, `0x10`, `1.0`, ` 1` or `01`. */
const PLAIN_INTEGER = /^-?(0|[1-9][0-9]*)$/;

interface Checked { (data: unknown): boolean; errors?: ErrorObject[] | null }

/** Refuses an integer-typed text field not written in plain digits, then runs `validate`. */
function plainIntegers(schema: object, validate: ValidateFunction): Checked {
  const { properties = {} } = schema as { properties?: Record<string, { type?: unknown }> };
  const names = Object.entries(properties).filter(([, property]) => property.type === 'integer').map(([name]) => name);
  const checked: Checked = (data) => {
    const fields = data as Record<string, unknown> | null;
    const bad = names.find((name) => [fields?.[name]].flat().some((v) => typeof v === 'string' && !PLAIN_INTEGER.test(v)));
    if (bad !== undefined) {
      checked.errors = [{ keyword: 'type', instancePath: `/${bad}`, schemaPath: '', params: { type: 'integer' }, message: 'must be integer' }];
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  return checked;
}

/** The schema at an error's `schemaPath` (`#/oneOf/1/properties/image/oneOf`). */
function schemaAt(root: object, path: string): unknown {
  return path.replace(/^#\/?/, '').split('/').filter((p) => p !== '')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
}

/** An Ajv error for a tagged union or an "exactly one of" said plainly, naming the field; undefined for any other. */
function readableError(root: object, errors: ErrorObject[]): ErrorObject | undefined {
  const [first] = errors;
  if (first === undefined) return undefined;
  if (first.keyword === 'discriminator') {
    const { tag, tagValue } = first.params as { tag: string; tagValue?: unknown };
    if (tagValue === undefined) return { ...first, keyword: 'required', params: { missingProperty: tag } };
    const members = (schemaAt(root, first.schemaPath.replace(/\/discriminator$/, '/oneOf')) ?? []) as { properties?: Record<string, { const?: unknown }> }[];
    const values = members.map((m) => m.properties?.[tag]?.const).filter((v) => v !== undefined).join(', ');
    return { ...first, instancePath: `${first.instancePath}/${tag}`, keyword: 'enum', message: `must be one of: ${values}` };
  }
  // `oneOf: [{required: [id]}, {required: [link]}]`: its branches' errors come first, the oneOf error last.
  const oneOf = errors.find((e) => e.keyword === 'oneOf' && first.schemaPath.startsWith(e.schemaPath));
  const alternatives = oneOf && schemaAt(root, oneOf.schemaPath);
  const single = (a: unknown): a is { required: [string] } =>
    typeof a === 'object' && a !== null && Object.keys(a).length === 1 && Array.isArray((a as { required?: unknown }).required)
    && (a as { required: unknown[] }).required.length === 1;
  if (oneOf && Array.isArray(alternatives) && alternatives.every(single)) {
    return { ...oneOf, message: `must have exactly one of ${alternatives.map((a) => a.required[0]).join(' or ')}` };
  }
  return undefined;
}

/** A body validator whose first error, for a union, names the field and the choice. */
function readableBodies(schema: object, validate: ValidateFunction): Checked {
  const checked: Checked = (data) => {
    const valid = validate(data);
    const better = valid || !validate.errors ? undefined : readableError(schema, validate.errors);
    checked.errors = better ? [better] : validate.errors;
    return valid;
  };
  return checked;
}

/** A body validator like the routes' own, for parts of a body checked one by one (the items of a batch). */
export function bodyValidator(schema: object): Checked {
  return readableBodies(schema, ajv({ coerceTypes: false, removeAdditional: false, discriminator: true }).compile(schema));
}

export default fp(async function validation(app: FastifyInstance) {
  // Bodies: no coercion (a string is not a number) and no silent removal (an unknown field is a 400); a tagged union
  // (`discriminator`) checks only the member its tag names, so an error names that member's field.
  const bodies = ajv({ coerceTypes: false, removeAdditional: false, discriminator: true });
  // Query strings and path params arrive as text: coerce them, once they are written plainly.
  const strings = ajv({ coerceTypes: 'array', removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? readableBodies(schema, bodies.compile(schema)) : plainIntegers(schema, strings.compile(schema))));

  // `{id}` path segments are positive integers, checked before authentication (the admin pages word it so).
  // Callback-style: it runs on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    const id = (request.params as { id?: unknown } | undefined)?.id;
    done(typeof id === 'string' && !/^[1-9][0-9]{0,15}$/.test(id) ? new AppError(400, 'VALIDATION_ERROR', 'params/id must be a positive integer') : undefined);
  });

  // Fastify parses text/plain by default; the contract accepts JSON only (anything else is 415) …
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  // … except an empty body, which a route without a body accepts whatever its content type.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type'), undefined);
  });
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    // An empty body is allowed: routes without a body accept it, routes with one fail validation.
    if (isEmptyJson(text)) return done(null, undefined);
    try {
      done(null, parseJsonBody(text));
    } catch (error) {
      done(error as AppError, undefined);
    }
  });
}, { name: 'validation' });
