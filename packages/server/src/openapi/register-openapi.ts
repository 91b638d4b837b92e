import swagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { KEY_CHARACTERS } from '../creation-keys/creation-key.js';
import type { Deps } from '../deps.js';
import { routeAccess, type Access } from '../http/guard.js';

/** The security requirement of each access level; `key` routes inherit the document's default. */
const SECURITY: Record<Access, Record<string, string[]>[] | undefined> = {
  key: undefined,
  admin: [{ adminToken: [] }],
  public: [],
  link: [],
  telegram: [],
};

const JSON_RPC_ID = { type: ['string', 'integer', 'null'] };
const JSON_RPC_MESSAGE = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'integer'] }, method: { type: 'string' }, params: { type: 'object' } },
  description: 'A request (with id) or a notification (without)',
};
const JSON_RPC_ANSWER = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: JSON_RPC_ID,
    result: { type: 'object' },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } },
  },
};
/** A lone message's answer, or a batch's answers in order. */
const JSON_RPC_ANSWERS = { oneOf: [JSON_RPC_ANSWER, { type: 'array', items: JSON_RPC_ANSWER }] };
const jsonRpcRefusal = (description: string) => ({ description, content: { 'application/json': { schema: JSON_RPC_ANSWER } } });

/**
 * What POST /mcp takes and answers, for the document only: the route reads its body as text
 * itself (a malformed one is a JSON-RPC parse error, not a validation error), so it declares no
 * body schema that Fastify would validate.
 */
const MCP_DOCUMENTATION = {
  body: { oneOf: [JSON_RPC_MESSAGE, { type: 'array', minItems: 1, items: JSON_RPC_MESSAGE }] },
  response: {
    200: {
      description: "The request's JSON-RPC response; for a batch, an array of responses in the batch's order",
      content: { 'application/json': { schema: JSON_RPC_ANSWERS } },
    },
    202: { description: 'Only notifications were sent: nothing to answer', type: 'null' },
    400: {
      description:
        '-32700 for a body that is not JSON, -32600 for JSON that is not JSON-RPC 2.0 (for a batch of nothing but invalid members, an array of their errors), -32000 for an MCP-Protocol-Version this server does not speak',
      content: { 'application/json': { schema: JSON_RPC_ANSWERS } },
    },
    406: jsonRpcRefusal('-32000: the Accept header excludes application/json'),
    413: jsonRpcRefusal('-32000: the body is over HERALD_BODY_LIMIT'),
    415: jsonRpcRefusal('-32000: Content-Type is not application/json, or the body is compressed'),
    429: jsonRpcRefusal('-32000: over the per-client-IP rate limit (see Retry-After)'),
    500: jsonRpcRefusal('-32603: a failure on the server; the message names the request id'),
  },
};

/** Says on each operation what the guard asks of it (see http/guard.ts). */
const securityByAccess: SwaggerTransform = ({ schema, url, route }) => {
  if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
  const security = SECURITY[routeAccess({ url, config: route.config })];
  const documented = url === '/mcp' && route.method === 'POST' ? { ...schema, ...MCP_DOCUMENTATION } : schema;
  return { schema: security ? { ...documented, security } : documented, url };
};

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per second: the tier limit of the key, or the per-client-IP limit without a valid key', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current one-second window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window ends, in Unix seconds', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The request id, as given in the request (a short token) or generated', schema: { type: 'string' } },
};
const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer' } };
const WWW_AUTHENTICATE = {
  description: 'How to authenticate: `Bearer realm="herald"` (API keys) or `Bearer realm="herald-admin"` (the admin token), with `error="invalid_token"` when a bearer token was sent but not accepted',
  schema: { type: 'string' },
};
const IDEMPOTENT_REPLAYED = {
  description: '`true` when this is the first answer given again for a repeated Idempotency-Key (nothing was created); absent otherwise',
  schema: { type: 'string', enum: ['true'] },
};
/** Operations whose body may be left out (none is the defaults). */
const OPTIONAL_BODIES = new Set(['/v1/webhooks/{id}/rotate-secret']);
/** Whether an operation takes an Idempotency-Key header (creation-keys/creation-key.ts). */
const takesIdempotencyKey = (operation: Json) =>
  (operation.parameters ?? []).some((parameter: Json) => parameter.in === 'header' && parameter.name === 'idempotency-key');

type Json = Record<string, any>;

/** Whether an operation reads credentials: key routes (the document's default security) and admin routes, not public ones. */
const takesCredentials = (operation: Json) => operation.security === undefined || operation.security.length > 0;

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * Error answers the guard and the body parser give on every route of a kind, whatever the route
 * itself declares: 400, 429, 431, 500 and 503 everywhere (429 per key, or per client IP without one), 408,
 * 413 and 415 wherever a body is read, 414 for a path parameter, 409 for an Idempotency-Key reused with another
 * body. /mcp documents its own (JSON-RPC) answers.
 */
function addGeneralErrors(path: string, method: string, operation: Json): void {
  if (path === '/mcp') return;
  const add = (status: string, description: string) => {
    operation.responses[status] ??= { description, content: ERROR_CONTENT };
  };
  add('429', 'Over the rate limit: the tier limit of the key, or the per-client-IP limit without a valid key (see Retry-After)');
  add('503', 'SERVICE_UNAVAILABLE: the database cannot be reached right now (see Retry-After)');
  add('500', 'INTERNAL_ERROR: a bug; the message carries the request id only');
  const pathParameters = (operation.parameters ?? []).some((parameter: Json) => parameter.in === 'path');
  // Checked before any route's own rules, on every route: said beside what the route declares.
  const malformed = `the request itself is malformed (an HTTP/1.1 request without a Host header${takesCredentials(operation) ? '; several Authorization headers' : ''})`;
  const declared = operation.responses['400'];
  const invalid = declared ? 'a parameter or body field is invalid (the message names it)' : pathParameters ? 'a path parameter is malformed' : undefined;
  operation.responses['400'] = { ...(declared ?? { content: ERROR_CONTENT }), description: `VALIDATION_ERROR: ${invalid ? `${invalid}, or ` : ''}${malformed}` };
  add('431', 'HEADERS_TOO_LARGE: the request line and headers are over 16 KB together');
  if (BODY_METHODS.has(method)) {
    add('408', 'REQUEST_TIMEOUT: the body did not arrive in full within 30 s');
    add('413', 'The body is over HERALD_BODY_LIMIT');
    add('415', 'The body is not JSON (Content-Type), or is compressed');
  }
  if (pathParameters) add('414', 'URI_TOO_LONG: a path parameter is longer than 4,096 characters');
  if (takesIdempotencyKey(operation)) add('409', 'DUPLICATE_IDEMPOTENCY_KEY: the Idempotency-Key was used with another body');
}

/**
 * `format: solana-wallet` is this server's own format, which no schema reader knows: the document
 * adds the base58 alphabet and length it implies (the server also decodes to exactly 32 bytes).
 */
const WALLET_PATTERN = '^[1-9A-HJ-NP-Za-km-z]{32,44}$';

/** `schema` with the wallet pattern added wherever it names the format; copied where it changes, as the route's own schemas may be shared. */
function withPattern(schema: Json): Json {
  if (!schema || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) {
    const items = schema.map(withPattern);
    return items.some((item, index) => item !== schema[index]) ? items : schema;
  }
  let out = schema;
  const change = (key: string, value: unknown) => {
    if (out === schema) out = { ...schema };
    out[key] = value;
  };
  for (const [key, value] of Object.entries<Json>(schema)) {
    const next = withPattern(value);
    if (next !== value) change(key, next);
  }
  if (out.format === 'solana-wallet' && out.pattern === undefined) change('pattern', WALLET_PATTERN);
  return out;
}

function withWalletPattern(operation: Json): void {
  for (const parameter of operation.parameters ?? []) parameter.schema = withPattern(parameter.schema);
  if (operation.requestBody) operation.requestBody = withPattern(operation.requestBody);
}

/** An object schema's `required` without the properties that have a default (the server fills them in). */
function withoutDefaultsRequired(schema: Json | undefined): void {
  if (!schema || !Array.isArray(schema.required) || !schema.properties) return;
  schema.required = schema.required.filter((name: string) => schema.properties[name]?.default === undefined);
  if (schema.required.length === 0) delete schema.required;
}

/** A stable operationId from the method and path, for generated clients: GET /v1/notifications/{id} is getNotificationsById. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((segment) => segment && segment !== 'v1')
    .flatMap((segment) => (segment.startsWith('{') ? ['by', segment.slice(1, -1)] : segment.split(/[^A-Za-z0-9]+/)));
  return method + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
}

/**
 * The finished document, corrected where route schemas say less than the server does: a parameter
 * or body field with a default is optional (Ajv fills the default in, so the route's own type has
 * it), and every response carries the rate-limit and request-id headers (429 and 503 a
 * `Retry-After` too, a token route's 401 `WWW-Authenticate`), as the guard sends them on every answer.
 */
const completeDocument = (document: Json): Json => {
  const openapi = document.openapiObject ?? document;
  openapi.components = {
    ...openapi.components,
    headers: { ...RATE_HEADERS, 'Retry-After': RETRY_AFTER, 'Idempotent-Replayed': IDEMPOTENT_REPLAYED, 'WWW-Authenticate': WWW_AUTHENTICATE },
  };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  for (const [path, item] of Object.entries<Json>(openapi.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) delete parameter.required;
        // Checked by the handler (creationKeyOf), which names the rule better than a pattern error would.
        if (parameter.in === 'header' && parameter.name === 'idempotency-key') parameter.schema = { ...parameter.schema, pattern: KEY_CHARACTERS.source };
      }
      withWalletPattern(operation);
      withoutDefaultsRequired(operation.requestBody?.content?.['application/json']?.schema);
      if (OPTIONAL_BODIES.has(path) && operation.requestBody) operation.requestBody.required = false;
      addGeneralErrors(path, method, operation);
      operation.operationId ??= operationIdOf(method, path);
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers: Json = Object.fromEntries(Object.keys(RATE_HEADERS).map((name) => [name, ref(name)]));
        if (status === '429' || status === '503') headers['Retry-After'] = ref('Retry-After');
        if (takesIdempotencyKey(operation) && status.startsWith('2')) headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
        // Not a wallet signature's 401: its route is public.
        if (status === '401' && takesCredentials(operation)) headers['WWW-Authenticate'] = ref('WWW-Authenticate');
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
