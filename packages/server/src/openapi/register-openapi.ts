import swagger, { type SwaggerTransform } from '@fastify/swagger';
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
  });
}
