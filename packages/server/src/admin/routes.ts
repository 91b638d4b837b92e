import { Type, type Static } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { listApiKeys, listProtocols } from '../account/protocol-store.js';
import { changeKeys } from '../auth/authenticator.js';
import type { Deps } from '../deps.js';
import { ApiError, requireSomeChange } from '../http/errors.js';
import { DisplayName, errorResponses, pageQuery } from '../http/schemas.js';
import { changeProtocol, createKey, createProtocol, getProtocol, keyView, protocolView, revokeKey } from './protocol-admin.js';

const Tier = Type.Integer({ minimum: 0, maximum: 3 });
const Environment = Type.Union([Type.Literal('production'), Type.Literal('sandbox')]);

const ProtocolView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tier: Type.Integer(),
  tierName: Type.String(),
  overageEnabled: Type.Boolean(),
  subscriptionExpiresAt: Type.String({ format: 'date-time' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const KeyView = Type.Object({
  id: Type.String(),
  prefix: Type.String(),
  environment: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const IdParams = Type.Object({ id: Type.String() });
const ProtocolChange = Type.Object({
  name: Type.Optional(DisplayName),
  tier: Type.Optional(Tier),
  overageEnabled: Type.Optional(Type.Boolean()),
  subscriptionExpiresAt: Type.Optional(Type.String({ format: 'date-time' })),
}, { minProperties: 1 });
const CHANGEABLE = Object.keys(ProtocolChange.properties) as (keyof Static<typeof ProtocolChange>)[];
const admin = { access: 'admin' as const };
const tags = ['admin'];

/** The operator's API, behind HERALD_ADMIN_TOKEN: protocols and their keys. */
export function adminRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.post(
    '/v1/admin/protocols',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a protocol with a live and a sandbox API key',
        body: Type.Object({
          name: DisplayName,
          tier: Tier,
          overageEnabled: Type.Optional(Type.Boolean()),
          subscriptionExpiresAt: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: {
          201: Type.Composite([ProtocolView, Type.Object({ apiKey: Type.String(), sandboxApiKey: Type.String() })]),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => reply.code(201).header('cache-control', 'no-store').send(await createProtocol(deps.db, request.body, deps.now())),
  );

  api.get(
    '/v1/admin/protocols',
    {
      config: admin,
      schema: {
        tags,
        summary: 'List protocols, newest first',
        querystring: Type.Object(pageQuery(20)),
        response: { 200: Type.Object({ data: Type.Array(ProtocolView), total: Type.Integer(), page: Type.Integer() }), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await listProtocols(deps.db, limit, (page - 1) * limit);
      return { data: rows.map(protocolView), total, page };
    },
  );

  api.get(
    '/v1/admin/protocols/:id',
    { config: admin, schema: { tags, summary: 'One protocol', params: IdParams, response: { 200: ProtocolView, ...errorResponses(401, 404) } } },
    async (request) => protocolView(await getProtocol(deps.db, request.params.id)),
  );

  api.patch(
    '/v1/admin/protocols/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Change name, tier, overage or subscription expiry',
        params: IdParams,
        body: ProtocolChange,
        response: { 200: ProtocolView, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      requireSomeChange(request.body, CHANGEABLE);
      const row = await changeKeys(deps.db, deps.authenticator, (tx) => changeProtocol(tx, request.params.id, request.body));
      return protocolView(row);
    },
  );

  api.get(
    '/v1/admin/protocols/:id/keys',
    {
      config: admin,
      schema: { tags, summary: "A protocol's API keys (prefixes only)", params: IdParams, response: { 200: Type.Object({ data: Type.Array(KeyView) }), ...errorResponses(401, 404) } },
    },
    async (request) => {
      await getProtocol(deps.db, request.params.id);
      return { data: (await listApiKeys(deps.db, request.params.id)).map(keyView) };
    },
  );

  api.post(
    '/v1/admin/protocols/:id/keys',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Issue another API key; the key is shown once',
        params: IdParams,
        body: Type.Object({ environment: Environment }),
        response: { 201: Type.Composite([KeyView, Type.Object({ apiKey: Type.String() })]), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.code(201).header('cache-control', 'no-store').send(await createKey(deps.db, request.params.id, request.body.environment)),
  );

  api.delete(
    '/v1/admin/protocols/:id/keys/:keyId',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Revoke an API key (takes effect at once in every process)',
        params: Type.Object({ id: Type.String({ minLength: 1 }), keyId: Type.String({ minLength: 1 }) }),
        response: { 200: KeyView, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      return changeKeys(deps.db, deps.authenticator, (tx) => revokeKey(tx, request.params.id, request.params.keyId));
    },
  );
}
