import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyHolderOf } from '../auth/live-key.js';
import { creationKeyOf, IdempotencyKeyHeaders, keyedAnswer as answer, refuseBodyKey } from '../creation-keys/creation-key.js';
import type { Deps } from '../deps.js';
import { ApiError, requireSomeChange } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import {
  createTemplate,
  deleteTemplate,
  readTemplate,
  readTemplateVersion,
  requireTemplateTier,
  requireTemplateWriter,
  restoreTemplateVersion,
  updateTemplate,
} from './manage-templates.js';
import {
  CreateTemplateBody,
  TemplateIdParams,
  TemplateListSchema,
  TemplateRecordSchema,
  TemplateVersionParams,
  TemplateVersionSchema,
  UpdateTemplateBody,
} from './schemas.js';
import { listTemplates } from './template-store.js';

const tags = ['templates'];
const UPDATABLE = ['name', 'category', 'subjectTemplate', 'htmlSource', 'textSource', 'serviceFooter'] as const;
const CREATE_FIELDS = Object.keys(CreateTemplateBody.properties);

/** Email templates (Growth tier and above): create, list, read, version, restore, delete. */
export function templateRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  // Every template route is tier-gated before its body is even read (onRequest runs after the key's check).
  const gate = { onRequest: async (request: FastifyRequest) => requireTemplateTier(request.auth!.protocol.tier) };
  // Live sends render the current versions: only a live key changes them (after the tier's check,
  // and an unknown id's 404, still before the body is read).
  const writeGate = {
    onRequest: async (request: FastifyRequest) => {
      requireTemplateTier(request.auth!.protocol.tier);
      const { id } = request.params as { id?: string };
      await requireTemplateWriter(deps, keyHolderOf(request), id);
    },
  };

  api.post(
    '/v1/templates/email',
    {
      ...writeGate,
      preValidation: refuseBodyKey('POST /v1/templates/email'),
      schema: {
        tags,
        summary: 'Create an email template (its version 1)',
        headers: IdempotencyKeyHeaders,
        body: CreateTemplateBody,
        response: { 201: Type.Object({ templateId: Type.String() }), ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const key = creationKeyOf(request, 'POST /v1/templates/email', CREATE_FIELDS);
      return reply.code(201).send(answer(reply, await createTemplate(deps, request.auth!.protocol.id, request.body, key)));
    },
  );

  api.get(
    '/v1/templates/email',
    { ...gate, schema: { tags, summary: "The protocol's templates, newest first", response: { 200: TemplateListSchema, ...errorResponses(401, 403, 429) } } },
    async (request) => {
      const rows = await listTemplates(deps.db, request.auth!.protocol.id);
      return { data: rows.map((r) => ({ id: r.id, name: r.name, category: r.category, createdAt: r.created_at.toISOString() })) };
    },
  );

  api.get(
    '/v1/templates/email/:id',
    {
      ...gate,
      schema: {
        tags,
        summary: 'A template: its current version and the list of every version',
        params: TemplateIdParams,
        response: { 200: TemplateRecordSchema, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => readTemplate(deps, request.auth!.protocol.id, request.params.id),
  );

  api.put(
    '/v1/templates/email/:id',
    {
      ...writeGate,
      preValidation: refuseBodyKey('PUT /v1/templates/email/:id'),
      schema: {
        tags,
        summary: 'Update a template: stores a new version, which becomes current',
        headers: IdempotencyKeyHeaders,
        params: TemplateIdParams,
        body: UpdateTemplateBody,
        response: { 200: TemplateRecordSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      requireSomeChange(body, UPDATABLE);
      const key = creationKeyOf(request, `PUT /v1/templates/email/${request.params.id}`, UPDATABLE);
      return answer(reply, await updateTemplate(deps, request.auth!.protocol.id, request.params.id, body, key));
    },
  );

  api.delete(
    '/v1/templates/email/:id',
    { ...writeGate, schema: { tags, summary: 'Delete a template', params: TemplateIdParams, response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(401, 403, 404, 429) } } },
    async (request, reply) => {
      await deleteTemplate(deps, request.auth!.protocol.id, request.params.id);
      return reply.code(204).send(null);
    },
  );

  api.get(
    '/v1/templates/email/:id/versions/:version',
    {
      ...gate,
      schema: {
        tags,
        summary: 'One stored version of a template',
        params: TemplateVersionParams,
        response: { 200: TemplateVersionSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => readTemplateVersion(deps, request.auth!.protocol.id, request.params.id, request.params.version),
  );

  api.post(
    '/v1/templates/email/:id/versions/:version/restore',
    {
      ...writeGate,
      preValidation: refuseBodyKey('POST /v1/templates/email/:id/versions/:version/restore'),
      schema: {
        tags,
        summary: 'Make an old version current again (stored as a new version that copies it)',
        headers: IdempotencyKeyHeaders,
        params: TemplateVersionParams,
        response: { 200: TemplateRecordSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id, version } = request.params;
      const key = creationKeyOf(request, `POST /v1/templates/email/${id}/versions/${version}/restore`, []);
      return answer(reply, await restoreTemplateVersion(deps, request.auth!.protocol.id, id, version, key));
    },
  );
}
