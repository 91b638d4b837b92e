import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { routeAccess, type Access } from '../http/guard.js';

/** The security requirement of each access level; `key` routes inherit the document's default. */
const SECURITY: Record<Access, Record<string, string[]>[] | undefined> = {
  key: undefined,
  admin: [{ adminToken: [] }],
  public: [],
};

/** Says on each operation what the guard asks of it (see http/guard.ts). */
const securityByAccess: SwaggerTransform = ({ schema, url, route }) => {
  if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
  const security = SECURITY[routeAccess({ url, config: route.config })];
  return { schema: security ? { ...schema, security } : schema, url };
};

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per second: the tier limit of the key, or the per-client-IP limit without a valid key', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current one-second window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window ends, in Unix seconds', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The request id, as given in the request (a short token) or generated', schema: { type: 'string' } },
};
const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer' } };

type Json = Record<string, any>;

/** An object schema's `required` without the properties that have a default (the server fills them in). */
function withoutDefaultsRequired(schema: Json | undefined): void {
  if (!schema || !Array.isArray(schema.required) || !schema.properties) return;
  schema.required = schema.required.filter((name: string) => schema.properties[name]?.default === undefined);
  if (schema.required.length === 0) delete schema.required;
}

/**
 * The finished document, corrected where route schemas say less than the server does: a parameter
 * or body field with a default is optional (Ajv fills the default in, so the route's own type has
 * it), and every response carries the rate-limit and request-id headers (429 and 503 a
 * `Retry-After` too), as the guard sends them on every answer.
 */
const completeDocument = (document: Json): Json => {
  const openapi = document.openapiObject ?? document;
  openapi.components = { ...openapi.components, headers: { ...RATE_HEADERS, 'Retry-After': RETRY_AFTER } };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  for (const item of Object.values<Json>(openapi.paths ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) delete parameter.required;
      }
      withoutDefaultsRequired(operation.requestBody?.content?.['application/json']?.schema);
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers: Json = Object.fromEntries(Object.keys(RATE_HEADERS).map((name) => [name, ref(name)]));
        if (status === '429' || status === '503') headers['Retry-After'] = ref('Retry-After');
        response.headers = { ...headers, ...response.headers };
      }
    }
  }
  return openapi;
};

/**
 * Collects every route schema into an OpenAPI 3.1 document (served by openapi/routes.ts). Must be
 * registered before any route: it learns routes through an onRoute hook.
 */
export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald notification gateway',
        version: '1.0.0',
        description:
          'Notify Solana wallets by email, Telegram and SMS. Every error answers `{statusCode, error, message, code}` (schema `Error`). The MCP documentation endpoint is `POST /mcp`.',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'A protocol API key: `hrld_live_…` (production) or `hrld_test_…` (sandbox)' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token, `HERALD_ADMIN_TOKEN`' },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Shared schemas keep their $id as component name (`#/components/schemas/Error`), not `def-N`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform: securityByAccess,
    transformObject: completeDocument as SwaggerTransformObject,
  });
}
