// Request validation and body parsing per SPEC §2: strict JSON bodies, coerced query strings and params.
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { AppError } from '../errors';

function ajv(options: Options): Ajv {
  const instance = new Ajv({ useDefaults: true, allErrors: false, strict: false, ...options });
  addFormats(instance);
  return instance;
}

export default fp(async function validation(app: FastifyInstance) {
  // Bodies: no coercion (a string is not a number) and no silent removal (an unknown field is a 400).
  const bodies = ajv({ coerceTypes: false, removeAdditional: false });
  // Query strings and path params arrive as text: coerce them.
  const strings = ajv({ coerceTypes: 'array', removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema));

  // `{id}` path segments are positive integers written plainly; Ajv's coercion alone would take `1e3` or `0x10`.
  app.addHook('preValidation', async (request) => {
    const id = (request.params as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string' && !/^[1-9][0-9]{0,15}$/.test(id)) {
      throw new AppError(400, 'VALIDATION_ERROR', 'params/id must be a positive integer');
    }
  });

  // Fastify parses text/plain by default; the contract accepts JSON only (anything else is 415).
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    // An empty body is allowed: routes without a body accept it, routes with one fail validation.
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new AppError(400, 'INVALID_JSON', 'Request body is not valid JSON'), undefined);
    }
  });
}, { name: 'validation' });
