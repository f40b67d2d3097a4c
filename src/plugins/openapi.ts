// OpenAPI 3 document built from the routes' TypeBox schemas, served at /docs/json with a UI at /docs.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { finishDocument } from './openapi-document';
import { cspHeader } from './security-headers';

const SELF = ["'self'"];

export default fp(async function openapi(app: FastifyInstance) {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Messaging gateway', version: '0.1.0', description: 'Multi-user gateway to a Cloud-API-style messaging network.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          cookie: {
            type: 'apiKey', in: 'cookie', name: 'token',
            description: 'The session cookie set by login. A request that changes something (not GET/HEAD/OPTIONS) and relies on it is '
              + 'refused 403 `CROSS_SITE_REQUEST` when a browser sent it from another site (its `Origin` is not the gateway\'s own, or '
              + 'without `Origin`, `Sec-Fetch-Site` is `cross-site` or `same-site`); requests with an `Authorization` header are not affected.',
          },
        },
      },
    },
    // Shared error shapes as components, global answers (413/415/500, x-request-id, Retry-After), OpenAPI 3.0 spellings.
    transformObject: (generated) => finishDocument('openapiObject' in generated ? generated.openapiObject : generated.swaggerObject),
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // The public validator badge would send the document's URL to a third party.
    uiConfig: { validatorUrl: null },
    // The UI's own scripts and styles are static files here: no inline script, no other site, no framing. Its
    // syntax highlighter sets style attributes, so inline styles (which cannot run code) are allowed on this page only.
    staticCSP: cspHeader({
      defaultSrc: SELF, baseUri: SELF, connectSrc: SELF, fontSrc: [...SELF, 'data:'], formAction: SELF, frameAncestors: ["'none'"],
      imgSrc: [...SELF, 'data:'], objectSrc: ["'none'"], scriptSrc: SELF, scriptSrcAttr: ["'none'"], styleSrc: [...SELF, "'unsafe-inline'"],
    }),
  });
}, { name: 'openapi' });
